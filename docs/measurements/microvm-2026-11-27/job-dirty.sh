# Two 256 MiB urandom writes of 128 KiB in a row, with the guest's Dirty/Writeback before,
# between and after (is the second write held by the guest's dirty limit?).
cell() { name=$1; shift
  /usr/bin/dd "$@" 2>/e.txt
  calls=$(sed -n 2p /e.txt | awk '{split($1,a,"+"); print a[1]+a[2]}')
  secs=$(awk -F', ' '/copied/{split($(NF-1),b," "); print b[1]}' /e.txt)
  echo "@@CELL $name $calls $secs"; }
mi() { echo "@@MEMINFO $1 $(grep -E '^(Dirty|Writeback):' /proc/meminfo | awk '{printf "%s%s kB ", $1, $2}') dirty_ratio=$(cat /proc/sys/vm/dirty_ratio) bg=$(cat /proc/sys/vm/dirty_background_ratio)"; }
mi before
cell write256m_128k_first if=/dev/urandom of=/tmp/wbig bs=128K count=2048
mi between
cell write256m_128k_second if=/dev/urandom of=/tmp/wbig bs=128K count=2048
mi after
