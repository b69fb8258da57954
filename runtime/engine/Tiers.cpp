// Memory tiers (docs/language.md, "Memory tiers"): `offload` and `prefetch` copy a value
// between the device, host memory and NVMe on the rank's transfers stream, and the checks
// that only device values are computed with or communicated. A copy's result is the same
// value in another tier (its shards, batches and step kept); the original stays where it was
// until the schedule frees it, as a real copy leaves its source.
#include "engine/World.h"

namespace schedc::sim {

namespace {

// A tier given as a number in the schedule (`device` 0, `host` 1, `nvme` 2), or none.
std::optional<Tier> tierOf(int64_t n) {
  if (n < 0 || n >= kTiers)
    return std::nullopt;
  return static_cast<Tier>(n);
}

} // namespace

bool Rank::checkTierNumber(SourceRange at, const char *what, int64_t n) {
  if (tierOf(n))
    return true;
  error(at, "tier-range",
        std::string(what) + " = " + std::to_string(n) + ": a memory tier is `device` (0), `host` (1) or `nvme` (2)");
  return false;
}

void Rank::reportOffDevice(SourceRange at, const std::string &user, const Value &v) {
  error(at, "tier-device",
        user + " uses " + v.describe() + " on rank " + std::to_string(id_) +
            ": only the device computes and communicates; bring it back with `prefetch` first");
}

ValuePtr Rank::refusedCopy(const Value &v) {
  Value copy = v;
  copy.poisoned = true;
  copy.tier = Tier::Device;
  return makeValue(std::move(copy));
}

bool Rank::pricesTier(SourceRange at, Tier from, Tier to) {
  std::string missing = world_.options_.costModel->missingForTier(from, to);
  if (missing.empty())
    return true;
  errorWith(at, "tier-price", [&] {
    bool update = from == Tier::Host && to == Tier::Host;
    return std::string(update ? "an update on the host's CPUs"
                              : "a copy from " + std::string(tierName(from)) + " to " + tierName(to)) +
           " cannot be timed: the machine gives no `" + missing + "`; give it with --hardware-set=" + missing + "=N";
  });
  return false;
}

bool Rank::checkUpdateTiers(SourceRange at, int64_t layer, const Value &g, const Value &w, const Value &o) {
  if (o.tier == Tier::Device && g.tier == Tier::Device && w.tier == Tier::Device) [[likely]]
    return true;
  const std::string what = "update of " + layerOf(layer) + " on rank " + std::to_string(id_);
  if (o.tier == Tier::Nvme || w.tier == Tier::Nvme) {
    error(at, "tier-update",
          what + " is given " + (o.tier == Tier::Nvme ? o : w).describe() +
              ": an update runs on the device or the host's CPUs; prefetch it to `host` or `device` first");
    return false;
  }
  if (w.tier != Tier::Device && w.tier != o.tier) {
    error(at, "tier-update",
          what + " runs where its optimizer state is (" + tierPlace(o.tier) + "), but its weight is " +
              tierPlace(w.tier) + ": give it the weight on the device or there");
    return false;
  }
  if (g.tier != o.tier) {
    error(at, "tier-update",
          what + " runs where its optimizer state is (" + tierPlace(o.tier) + "), but its gradient is " +
              tierPlace(g.tier) + ": " + (g.tier < o.tier ? "offload it there first" : "prefetch it there first"));
    return false;
  }
  return o.tier != Tier::Host || pricesTier(at, Tier::Host, Tier::Host);
}

ValuePtr Rank::transfer(SourceRange at, const ValuePtr &v, int64_t to, bool down) {
  const char *name = down ? "offload" : "prefetch";
  if (cancelled() || refusedInPair(at, name, true))
    return poison(v->kind, v->layer);
  bool ok = checkTierNumber(at, "to", to);
  const Tier target = ok ? static_cast<Tier>(to) : v->tier;
  if (ok && !v->poisoned && (down ? target <= v->tier : target >= v->tier)) {
    errorWith(at, "tier-direction", [&] {
      return std::string(name) + " of " + v->describe() + " to " + tierName(target) + ": " + name +
             (down ? " moves a value to a slower tier (from the device to `host` or `nvme`, from host memory to "
                     "`nvme`); bring it back with `prefetch`"
                   : " moves a value towards the device (to `device`, or from NVMe to `host`); move it away with "
                     "`offload`");
    });
    ok = false;
  }
  ok = ok && (v->poisoned || pricesTier(at, v->tier, target));
  Value copy = *v;
  copy.tier = target;
  copy.poisoned = !ok || v->poisoned;
  // The bytes copied: what the copy takes where it lands (a refused copy moves none).
  copy.made = logEvent({.kind = down ? EventKind::Offload : EventKind::Prefetch,
                        .tier = target,
                        .source = v->tier,
                        .layer = v->layer,
                        .volume = ok ? storage_.heldBytes(copy) : 0},
                       nullptr, at, v->made);
  return makeValue(std::move(copy));
}

} // namespace schedc::sim
