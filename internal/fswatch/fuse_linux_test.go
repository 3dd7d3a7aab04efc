//go:build linux

package fswatch

import (
	"encoding/binary"
	"os"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// memFuse is the least FUSE file system for the tests: one folder of
// regular files held in memory, whose names may be as long as FUSE allows
// (1024 bytes, where ext4 and tmpfs stop at 255; exfat, vfat, ntfs3 and
// ntfs-3g take 255 UTF-16 units, up to 765 bytes of UTF-8). It serves the
// kernel's requests on /dev/fuse until it is unmounted.
type memFuse struct {
	dir   string
	fd    int
	mu    sync.Mutex
	names map[string]uint64 // name -> node
	files map[uint64][]byte
	next  uint64
	done  chan struct{}
}

// mountFuse mounts a memFuse on a new folder, or skips the test where
// that cannot be done (not root, no /dev/fuse).
func mountFuse(t *testing.T) *memFuse {
	t.Helper()
	fd, err := unix.Open("/dev/fuse", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no FUSE here: %v", err)
	}
	dir := t.TempDir()
	opts := "fd=" + itoa(fd) + ",rootmode=40000,user_id=" + itoa(os.Getuid()) + ",group_id=" + itoa(os.Getgid())
	if err := unix.Mount("memfuse", dir, "fuse.memfuse", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		unix.Close(fd)
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	m := &memFuse{dir: dir, fd: fd, names: map[string]uint64{}, files: map[uint64][]byte{}, next: 2, done: make(chan struct{})}
	go m.serve()
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Logf("unmount %s: %v", dir, err)
		}
		<-m.done
		unix.Close(fd)
	})
	return m
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

const (
	fuseLookup   = 1
	fuseForget   = 2
	fuseGetattr  = 3
	fuseSetattr  = 4
	fuseOpen     = 14
	fuseRead     = 15
	fuseWrite    = 16
	fuseRelease  = 18
	fuseFlush    = 25
	fuseInit     = 26
	fuseOpendir  = 27
	fuseReaddir  = 28
	fuseRelDir   = 29
	fuseCreate   = 35
	fuseDestroy  = 38
	fuseBForget  = 42
	fuseUnlink   = 10
	fuseInterrup = 36
)

var le = binary.LittleEndian

func (m *memFuse) serve() {
	defer close(m.done)
	buf := make([]byte, 1<<20+4096)
	for {
		n, err := unix.Read(m.fd, buf)
		if err == unix.EINTR || err == unix.ENOENT || err == unix.EAGAIN {
			continue
		}
		if err != nil || n < 40 {
			return // unmounted (ENODEV)
		}
		req := buf[:n]
		op := le.Uint32(req[4:])
		unique := le.Uint64(req[8:])
		node := le.Uint64(req[16:])
		body := req[40:]
		switch op {
		case fuseForget, fuseBForget, fuseInterrup:
			continue // no reply
		case fuseDestroy:
			m.reply(unique, 0, nil)
			return
		}
		if os.Getenv("FUSEDEBUG") != "" {
			println("fuse op", op, node)
		}
		errno, out := m.handle(op, node, body)
		m.reply(unique, errno, out)
	}
}

func (m *memFuse) reply(unique uint64, errno int32, out []byte) {
	h := make([]byte, 16, 16+len(out))
	le.PutUint32(h[0:], uint32(16+len(out)))
	le.PutUint32(h[4:], uint32(errno)) // negative
	le.PutUint64(h[8:], unique)
	unix.Write(m.fd, append(h, out...))
}

func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// attr is a fuse_attr (88 bytes).
func (m *memFuse) attr(node uint64) []byte {
	a := make([]byte, 88)
	le.PutUint64(a[0:], node)
	mode, nlink := uint32(unix.S_IFDIR|0o755), uint32(2)
	if node != 1 {
		mode, nlink = unix.S_IFREG|0o644, 1
		le.PutUint64(a[8:], uint64(len(m.files[node])))
	}
	le.PutUint32(a[60:], mode)
	le.PutUint32(a[64:], nlink)
	le.PutUint32(a[68:], uint32(os.Getuid()))
	le.PutUint32(a[72:], uint32(os.Getgid()))
	le.PutUint32(a[80:], 4096)
	return a
}

// entry is a fuse_entry_out (128 bytes), valid for no time at all.
func (m *memFuse) entry(node uint64) []byte {
	e := make([]byte, 40)
	le.PutUint64(e[0:], node)
	return append(e, m.attr(node)...)
}

func attrOut(a []byte) []byte { return append(make([]byte, 16), a...) }

func (m *memFuse) handle(op uint32, node uint64, body []byte) (int32, []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch op {
	case fuseInit:
		out := make([]byte, 64)
		le.PutUint32(out[0:], 7)
		le.PutUint32(out[4:], 31)
		le.PutUint32(out[8:], le.Uint32(body[8:]))
		le.PutUint16(out[16:], 16)
		le.PutUint16(out[18:], 12)
		le.PutUint32(out[20:], 1<<20)
		le.PutUint32(out[24:], 1)
		return 0, out
	case fuseLookup:
		n, ok := m.names[cstr(body)]
		if node != 1 || !ok {
			return -int32(unix.ENOENT), nil
		}
		return 0, m.entry(n)
	case fuseGetattr:
		if node != 1 && m.files[node] == nil {
			return -int32(unix.ENOENT), nil
		}
		return 0, attrOut(m.attr(node))
	case fuseSetattr:
		valid := le.Uint32(body[0:])
		if valid&(1<<3) != 0 { // FATTR_SIZE
			size := le.Uint64(body[16:])
			f := m.files[node]
			if uint64(len(f)) > size {
				m.files[node] = f[:size:size]
			}
		}
		return 0, attrOut(m.attr(node))
	case fuseCreate:
		name := cstr(body[16:])
		n, ok := m.names[name]
		if !ok {
			n = m.next
			m.next++
			m.names[name] = n
			m.files[n] = []byte{}
		}
		return 0, append(m.entry(n), make([]byte, 16)...)
	case fuseOpen, fuseOpendir:
		return 0, make([]byte, 16)
	case fuseWrite:
		off, size := le.Uint64(body[8:]), le.Uint32(body[16:])
		data := body[40 : 40+size]
		f := m.files[node]
		for uint64(len(f)) < off+uint64(size) {
			f = append(f, 0)
		}
		copy(f[off:], data)
		m.files[node] = f
		out := make([]byte, 8)
		le.PutUint32(out, size)
		return 0, out
	case fuseRead:
		off, size := le.Uint64(body[8:]), le.Uint32(body[16:])
		f := m.files[node]
		if off >= uint64(len(f)) {
			return 0, nil
		}
		return 0, f[off:min(uint64(len(f)), off+uint64(size))]
	case fuseUnlink:
		name := cstr(body)
		if n, ok := m.names[name]; ok {
			delete(m.names, name)
			delete(m.files, n)
			return 0, nil
		}
		return -int32(unix.ENOENT), nil
	case fuseReaddir:
		return 0, nil // empty: enough for the tests
	case fuseRelease, fuseFlush, fuseRelDir:
		return 0, nil
	}
	return -int32(unix.ENOSYS), nil
}
