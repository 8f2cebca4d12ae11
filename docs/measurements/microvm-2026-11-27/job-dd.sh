# The thesis's /tmp cells with coreutils dd, inside the guest (busybox sh).
# Prints "@@CELL name calls seconds" per dd run; per-call time = seconds / calls.
# N: repetitions of the 10 KB cells; BIG=1 adds the 32 MiB direct read (512 B) and two
# 256 MiB urandom writes of 128 KiB in a row on the same file.
N=${N:-5}; BIG=${BIG:-0}
cell() {  # cell NAME in|out dd-args...
  name=$1; which=$2; shift 2
  /usr/bin/dd "$@" 2>/e.txt
  if [ "$which" = in ]; then r=$(sed -n 1p /e.txt); else r=$(sed -n 2p /e.txt); fi
  calls=$(echo "$r" | awk '{split($1,a,"+"); print a[1]+a[2]}')
  secs=$(awk -F', ' '/copied/{split($(NF-1),b," "); print b[1]}' /e.txt)
  echo "@@CELL $name $calls $secs"
}
head -c 10000 /dev/urandom > /tmp/r10k
[ "$BIG" = 1 ] && /usr/bin/dd if=/dev/urandom of=/tmp/r32m bs=1M count=32 2>/dev/null
sync
i=0
while [ $i -lt $N ]; do
  cell read10k_512 in if=/tmp/r10k of=/dev/null bs=512 iflag=direct
  cell write10k_512 out if=/dev/urandom of=/tmp/w10k bs=512 count=20
  i=$((i+1))
done
if [ "$BIG" = 1 ]; then
  cell read32m_512 in if=/tmp/r32m of=/dev/null bs=512 iflag=direct
  cell write256m_128k_first out if=/dev/urandom of=/tmp/wbig bs=128K count=2048
  cell write256m_128k_second out if=/dev/urandom of=/tmp/wbig bs=128K count=2048
fi
free -m | sed -n 2p | awk '{print "@@MEM total_mb=" $2 " used_mb=" $3}'
