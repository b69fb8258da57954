// Execute implementation: one case per operation, each reading its arguments by name.
#include "engine/Execute.h"

namespace schedc::sim {

namespace {

Results two(std::pair<ValuePtr, ValuePtr> vs) {
  Results r;
  r.values = {std::move(vs.first), std::move(vs.second)};
  r.count = 2;
  return r;
}

// A backward (or a half): results in the table's order, and both gradients kept.
Results backward(Rank &rank, OpKind op, SourceRange at, const Operands &a) {
  using P = param::Backward; // the halves' parameters are the same
  std::pair<ValuePtr, ValuePtr> grads =
      rank.backward(at, a.integer(P::layer), a.value(P::input), a.value(P::grad), a.value(P::weight), backwardPart(op));
  Results r =
      op == OpKind::Backward ? two(grads) : Results::one(op == OpKind::BackwardInput ? grads.second : grads.first);
  r.backward = std::move(grads);
  return r;
}

} // namespace

CollectiveArgs collectiveArgs(OpKind op, const Operands &a) {
  CollectiveArgs out;
  std::span<const ParamInfo> params = opInfo(op).params;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].kind == ParamKind::Value)
      out.value = a.args[i].value;
    if (params[i].kind == ParamKind::Group)
      out.group = a.args[i].group;
  }
  SCHEDC_ASSERT(out.value && out.group, "a collective without its value or its group");
  return out;
}

Rank::BackwardPart backwardPart(OpKind op) {
  return op == OpKind::BackwardInput    ? Rank::BackwardPart::Input
         : op == OpKind::BackwardWeight ? Rank::BackwardPart::Weight
                                        : Rank::BackwardPart::Both;
}

Results execute(Rank &rank, OpKind op, SourceRange at, const Operands &a) {
  switch (op) {
    SCHEDC_COLLECTIVE_OP_CASES {
      CollectiveArgs c = collectiveArgs(op, a);
      return Results::one(rank.collective(at, *collectiveOf(op), c.value, std::move(c.group)));
    }
  case OpKind::Load: {
    using P = param::Load;
    return two(rank.load(at, a.integer(P::layer), a.integer(P::shard), a.integer(P::of), a.integer(P::part),
                         a.integer(P::parts), a.integer(P::expert), a.integer(P::experts), a.integer(P::on),
                         a.integer(P::opt_on)));
  }
  case OpKind::Input: return Results::one(rank.input(at, a.set(param::Input::batches)));
  case OpKind::Forward: {
    using P = param::Forward;
    return Results::one(rank.forward(at, a.integer(P::layer), a.value(P::input), a.value(P::weight)));
  }
  case OpKind::Backward:
  case OpKind::BackwardInput:
  case OpKind::BackwardWeight: return backward(rank, op, at, a);
  case OpKind::Loss: return Results::one(rank.loss(at, a.value(param::Loss::input)));
  case OpKind::Update: {
    using P = param::Update;
    return two(rank.update(at, a.integer(P::layer), a.value(P::grad), a.value(P::weight), a.value(P::opt)));
  }
  case OpKind::AddGrad:
    return Results::one(rank.addGrad(at, a.value(param::AddGrad::lhs), a.value(param::AddGrad::rhs)));
  case OpKind::FakeGrad:
    return Results::one(rank.fakeGrad(at, a.integer(param::FakeGrad::layer), a.set(param::FakeGrad::batches)));
  case OpKind::Shard: {
    using P = param::Shard;
    return Results::one(rank.shard(at, a.value(P::value), a.integer(P::shard), a.integer(P::of)));
  }
  case OpKind::Send: {
    using P = param::Send;
    rank.send(at, a.integer(P::to), a.value(P::value), a.integer(P::tag));
    return {};
  }
  case OpKind::Recv: return Results::one(rank.recv(at, a.integer(param::Recv::from), a.integer(param::Recv::tag)));
  case OpKind::PostRecv: {
    using P = param::PostRecv;
    rank.postRecv(at, a.integer(P::from), a.integer(P::tag));
    return {};
  }
  case OpKind::Offload: {
    using P = param::Offload;
    return Results::one(rank.transfer(at, a.value(P::value), a.integer(P::to), true));
  }
  case OpKind::Prefetch: {
    using P = param::Prefetch;
    return Results::one(rank.transfer(at, a.value(P::value), a.integer(P::to), false));
  }
  case OpKind::Read: break; // a storage read: the executors read the slot (Rank::read)
  }
  SCHEDC_UNREACHABLE("an operation the sim backend cannot execute");
}

} // namespace schedc::sim
