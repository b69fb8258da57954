#!/usr/bin/env bash
# gpu-bundle.sh [DIR [OPTION...]] — builds here what the GPU checks run, for a GPU machine
# that has CUDA's libraries (cuBLAS, NCCL: a CUDA 13 toolkit or PyTorch's wheels) but none
# of schedc's build dependencies (no LLVM, ANTLR or Debian's Open MPI and OpenBLAS): the
# cases of test/lit/cuda/equivalence.py that fit the GPUs (--gpus=N, default 1) and the two
# executables of test/lit/cuda/gpu-messages.test, compiled with --cuda and stripped; the
# Debian libraries they load; Open MPI (orterun, its components, PMIx) relocated under
# DIR/ompi (OPAL_PREFIX); env.sh, which sets them up there (one node: shared memory, no
# network fabrics) and finds CUDA's libraries; and `mpirun`, which starts one process as an
# MPI singleton (no daemon) and several with orterun. Written as DIR.tar.xz (default
# gpu-bundle.tar.xz, ignored by git), which scripts/gpu-check.sh --bundle=DIR.tar.xz
# unpacks and runs there. OPTIONs go to equivalence.py (--stand-in=cpu: built without
# --cuda, as its test does); $SCHEDC is the compiler (default build/bin/schedc).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-gpu-bundle}"
shift $(($# > 0 ? 1 : 0))
rm -rf "$dir" "$dir.tar.xz"
mkdir -p "$dir/cases" "$dir/messages" "$dir/lib"
schedc="${SCHEDC:-build/bin/schedc}"
python3 test/lit/cuda/equivalence.py "$schedc" examples test/lit/check/Inputs mpiexec \
  --build-only="$dir/cases" --gpus=1 "$@"
cuda=--cuda
[[ " $* " == *" --stand-in=cpu "* ]] && cuda=""
"$schedc" build $cuda stdlib/interleaved.sched -o "$dir/messages/interleaved"
"$schedc" build $cuda test/lit/check/warnings.sched -o "$dir/messages/warnings"
strip "$dir"/cases/* "$dir"/messages/*

# The libraries the executables load from Debian (CUDA's come from the GPU machine; the C
# and C++ runtimes there are newer than these, so they are not carried).
ldd "$dir/cases/basic" | awk '$3 ~ /^\// {print $3}' | grep -v -E '/usr/local/cuda|/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.so' |
  while read -r lib; do cp -L "$lib" "$dir/lib/"; done
# Open MPI's components and help texts, at the layout Debian's build expects under its
# prefix, so OPAL_PREFIX can move them.
ompi=/usr/lib/x86_64-linux-gnu/openmpi
mkdir -p "$dir/ompi/lib/x86_64-linux-gnu/openmpi/lib" "$dir/ompi/share"
cp -rL "$ompi/lib/openmpi3" "$dir/ompi/lib/x86_64-linux-gnu/openmpi/lib/"
cp -rL /usr/share/openmpi "$dir/ompi/share/"
# orterun, for several processes on one node, and what its PMIx component and the
# shared-memory components load.
cp -L /usr/bin/orterun "$dir/orterun"
for lib in libpmix.so.2 libmunge.so.2 libmca_common_sm.so.40 libmca_common_ompio.so.41; do
  cp -L "/lib/x86_64-linux-gnu/$lib" "$dir/lib/"
done

cat >"$dir/env.sh" <<'ENV'
# Sourced on the GPU machine: Debian's libraries and Open MPI from this bundle, CUDA's
# from wherever that machine keeps them.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export OPAL_PREFIX="$here/ompi" OMPI_MCA_ess_singleton_isolated=1
export OMPI_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
export PMIX_MCA_pcompress_base_silence_warning=1 # its notice's help text is not carried
cuda_dirs=""
for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
  found="$(find /usr/local/cuda*/ /opt /usr/lib /usr/local/lib -name "$lib" 2>/dev/null | head -1)"
  [[ -n "$found" ]] || { echo "env.sh: $lib not found on this machine" >&2; continue; }
  [[ ":$cuda_dirs:" == *":$(dirname "$found"):"* ]] || cuda_dirs="$cuda_dirs:$(dirname "$found")"
done
export LD_LIBRARY_PATH="$here/lib$cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ENV

cat >"$dir/mpirun" <<'RUN'
#!/usr/bin/env bash
# mpirun [--allow-run-as-root] [-x VAR=VALUE]... -np N EXECUTABLE ARGS... — with -np 1, one
# process started as an MPI singleton (env.sh's settings) with mpirun's -x variables set;
# else the bundle's orterun.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
args=("$@")
for ((i = 0; i + 1 < ${#args[@]}; ++i)); do
  [[ "${args[$i]}" == -np && "${args[$((i + 1))]}" != 1 ]] && exec "$here/orterun" "$@"
done
while [[ $# -gt 0 ]]; do
  case "$1" in
    --allow-run-as-root) shift ;;
    -x) export "$2"; shift 2 ;;
    -np) shift 2 ;;
    *) break ;;
  esac
done
exec "$@"
RUN
chmod +x "$dir/mpirun"
tar -C "$(dirname "$dir")" -cJf "$dir.tar.xz" "$(basename "$dir")"
rm -rf "$dir"
echo "wrote $dir.tar.xz ($(du -h "$dir.tar.xz" | cut -f1))"
