#!/bin/sh
# The same dd cells on this host directly (no VM, no limits): the reference for how much
# slower the guest's CPU (TCG) makes each call. Prints "@@CELL name calls seconds".
D=${D:-/tmp/vm26/hb}; mkdir -p $D; N=${N:-5}
cell() { name=$1; which=$2; shift 2
  dd "$@" 2>$D/e.txt
  if [ "$which" = in ]; then r=$(sed -n 1p $D/e.txt); else r=$(sed -n 2p $D/e.txt); fi
  calls=$(echo "$r" | awk '{split($1,a,"+"); print a[1]+a[2]}')
  secs=$(awk -F', ' '/copied/{split($(NF-1),b," "); print b[1]}' $D/e.txt)
  echo "@@CELL $name $calls $secs"; }
head -c 10000 /dev/urandom > $D/r10k; dd if=/dev/urandom of=$D/r32m bs=1M count=32 2>/dev/null; sync
i=0; while [ $i -lt $N ]; do
  cell read10k_512 in if=$D/r10k of=/dev/null bs=512 iflag=direct
  cell write10k_512 out if=/dev/urandom of=$D/w10k bs=512 count=20
  i=$((i+1)); done
cell read32m_512 in if=$D/r32m of=/dev/null bs=512 iflag=direct
cell write256m_128k_first out if=/dev/urandom of=$D/wbig bs=128K count=2048
cell write256m_128k_second out if=/dev/urandom of=$D/wbig bs=128K count=2048
rm -rf $D
