# Does qemu's throttle let a short dd through unthrottled (its default burst = avg/10)?
# 20 direct reads of 512 B (the thesis's 10 KB file), then 200 (a 100 KB file), 3 times each.
cell() { name=$1; shift
  /usr/bin/dd "$@" 2>/e.txt
  calls=$(sed -n 1p /e.txt | awk '{split($1,a,"+"); print a[1]+a[2]}')
  secs=$(awk -F', ' '/copied/{split($(NF-1),b," "); print b[1]}' /e.txt)
  echo "@@CELL $name $calls $secs"; }
head -c 10000 /dev/urandom > /tmp/r10k; head -c 102400 /dev/urandom > /tmp/r100k; sync
for i in 1 2 3; do
  sleep 1; cell read10k_512 if=/tmp/r10k of=/dev/null bs=512 iflag=direct
  sleep 1; cell read100k_512 if=/tmp/r100k of=/dev/null bs=512 iflag=direct
done
