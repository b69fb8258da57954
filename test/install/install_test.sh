#!/bin/sh
# install_test.sh BUILD_DIR — installs schedc to a temporary prefix and uses it from another
# folder, as a user who never saw the build tree would: check a schedule that imports the
# standard library, build one into an executable and run it, and check a PyTorch schedule;
# then makes the Debian package (CPack) and looks into it.
# The installed program must take its files from the prefix (`schedc --version` says where).
set -eu
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
mkdir "$work/elsewhere"
cd "$work/elsewhere"
schedc="$prefix/bin/schedc"

"$schedc" --version > version.txt
grep -q "^stdlib: $prefix/share/schedc/stdlib$" version.txt || { cat version.txt; echo "FAIL: stdlib not from the prefix"; exit 1; }
grep -q "^runtime: $prefix/lib/schedc$" version.txt || { cat version.txt; echo "FAIL: runtime not from the prefix"; exit 1; }
test -f "$prefix/include/schedc/runtime.h"
# The C ABI's header compiles on its own from the prefix (it includes the operation tables).
printf '#include <schedc/runtime.h>\nint main(void) { return SCHEDC_ABI_VERSION > 0 ? 0 : 1; }\n' > abi.c
cc -I"$prefix/include" -c abi.c -o abi.o || { echo "FAIL: schedc/runtime.h does not compile from the prefix"; exit 1; }
test -f "$prefix/share/doc/schedc/language.md"

cat > mine.sched <<'SCHED'
import "pipeline.sched";
schedule mine(layers = 4, batches = 4, ranks = 2) {
  let per = layers / ranks;
  load_stage(rank * per, per);
  for mb in 0..batches { stage_forward(mb, rank * per, per); }
  for mb in 0..batches { stage_backward(mb, rank * per, per, 0); }
  update_stage(rank * per, per);
}
SCHED
"$schedc" check mine.sched | grep -q "^Correct!"
"$schedc" build mine.sched -o mine
./mine | grep -q "^Correct!"
./mine -D batches=8 | grep -q "^Correct!"
"$schedc" run mine.sched -D ranks=4 -D layers=8 | grep -q "^Correct!"
"$schedc" check "$prefix/share/schedc/examples/pytorch/dualpipev_4rank_10mb.csv" | grep -q "^Correct!"
"$schedc" check "$prefix/share/schedc/stdlib/1f1b.sched" | grep -q "^Correct!"
echo "installed to $prefix: check, build and run from another folder: ok"

# The Debian package holds the same files under /usr.
cpack --config "$build/CPackConfig.cmake" -B "$work/package" > "$work/cpack.log"
deb=$(ls "$work"/package/schedc_*.deb)
dpkg-deb --field "$deb" Package Depends
dpkg-deb --contents "$deb" > contents.txt
for f in ./usr/bin/schedc ./usr/bin/schedc-llvm ./usr/lib/schedc/libschedc_rt.a ./usr/share/schedc/stdlib/1f1b.sched \
         ./usr/include/schedc/runtime.h ./usr/include/schedc/ops/Operations.def; do
  grep -q " $f\$" contents.txt || { echo "FAIL: $f is not in $(basename "$deb")"; exit 1; }
done
echo "$(basename "$deb"): ok"
