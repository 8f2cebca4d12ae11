#!/bin/sh
# Builds the spike's guest: Debian's cloud kernel (virtio/virtio-mmio/virtio-blk are
# modules there, so they go in the initramfs), an initramfs of busybox-static, coreutils'
# dd (the thesis's dd) with its libc, and ./init; and an ext4 template image for /tmp.
# Needs: apt-get install qemu-system-x86 busybox-static cpio (Debian bookworm).
set -eu
W=${W:-/tmp/vm26}
KPKG=${KPKG:-linux-image-6.1.0-56-cloud-amd64}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$W" && cd "$W"
ls ${KPKG}_*.deb >/dev/null 2>&1 || apt-get download "$KPKG"
rm -rf k && mkdir k && dpkg-deb -x ${KPKG}_*.deb k
KV=$(ls k/lib/modules)
cp k/boot/vmlinuz-$KV vmlinuz
rm -rf ird && mkdir -p ird/bin ird/usr/bin ird/lib/mod ird/lib/x86_64-linux-gnu ird/lib64 ird/etc
cp /bin/busybox ird/bin/busybox
for m in drivers/virtio/virtio drivers/virtio/virtio_ring drivers/virtio/virtio_mmio drivers/block/virtio_blk; do
  cp k/lib/modules/$KV/kernel/$m.ko ird/lib/mod/
done
cp /bin/dd ird/usr/bin/dd
cp /lib/x86_64-linux-gnu/libc.so.6 ird/lib/x86_64-linux-gnu/
cp /lib64/ld-linux-x86-64.so.2 ird/lib64/
cp "$HERE/init" ird/init
(cd ird && for a in sh cat cut sed mkdir mount umount sync base64 sleep usleep free ls rm stat echo date head tail awk grep uname nproc chmod; do ln -sf /bin/busybox bin/$a; done)
(cd ird && find . | cpio -o -H newc --quiet | gzip -1) > initrd.gz
rm -f tmp.tmpl.img && truncate -s 1G tmp.tmpl.img && mkfs.ext4 -q -F tmp.tmpl.img
ls -la vmlinuz initrd.gz tmp.tmpl.img
