package baseline

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/piagent/piagent/internal/atomicfile"
	"github.com/piagent/piagent/internal/gitnest"
	"github.com/piagent/piagent/internal/registry"
	"github.com/piagent/piagent/internal/safefile"
)

// Where a restore happened, for the quarantine's record.
const (
	DuringSession = "during the session"
	AfterExit     = "after Pi exited"
	AfterCrash    = "after a session whose launcher did not finish"
)

// Quarantine is the record of one restore: what was found changed, and
// where what was there now is.
type Quarantine struct {
	Version int       `json:"version"`
	ID      string    `json:"id"`
	Project string    `json:"project"`
	When    time.Time `json:"when"`
	Source  string    `json:"source"`
	Changes []Kept    `json:"changes"`
	// Examined is "" until the person accepted the change as theirs
	// ("accepted"); a discarded quarantine is removed.
	Examined string `json:"examined,omitempty"`
}

// Kept is one changed path.
type Kept struct {
	Path   string `json:"path"`
	Change string `json:"change"` // "added", "removed" or "changed"
	// Kept: what was there is in the quarantine's files/ under Path.
	Kept bool `json:"kept"`
	// Restored: the path is as it was at the session's start again.
	Restored bool   `json:"restored"`
	Note     string `json:"note,omitempty"`
}

// Dir is where quarantines are kept: inside piagent's registered folder,
// which no agent command or tool may write.
func Dir(home string) string { return registry.QuarantineDir(home) }

// Folder is one quarantine's folder.
func Folder(home, id string) string { return filepath.Join(Dir(home), id) }

// maxCopy bounds a file copied into the quarantine across file systems (a
// rename moves any size).
const maxCopy = 256 << 20

const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// Restore puts each change back to the baseline s: what is at the path now
// is moved into a new quarantine folder (renamed, or copied and removed
// across file systems), then the baseline's version is written. Every
// step inside the project goes through folders opened without following a
// link, so a link planted in the project cannot lead a write elsewhere.
func Restore(home string, s *Snapshot, changes []Change, source string) (*Quarantine, error) {
	q := &Quarantine{Version: 1, ID: newID(), Project: s.Project, When: time.Now().UTC(), Source: source}
	dir := Folder(home, q.ID)
	if err := os.MkdirAll(filepath.Join(dir, "files"), 0o700); err != nil {
		return nil, fmt.Errorf("cannot make the quarantine folder: %w", err)
	}
	files, err := unix.Open(filepath.Join(dir, "files"), dirFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot open the quarantine folder: %w", err)
	}
	defer unix.Close(files)
	proj, err := unix.Open(s.Project, dirFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot open the project %s: %w", s.Project, err)
	}
	defer unix.Close(proj)
	base := s.index()
	for _, c := range changes {
		k := Kept{Path: c.Path, Change: c.What}
		if err := restoreOne(proj, files, s, base, c, &k); err != nil {
			k.Note = err.Error()
		}
		q.Changes = append(q.Changes, k)
	}
	if err := q.save(home); err != nil {
		return q, err
	}
	return q, nil
}

func restoreOne(proj, files int, s *Snapshot, base map[string]*Entry, c Change, k *Kept) error {
	dirRel, name := path.Split(c.Path)
	parent, err := openDirAt(proj, dirRel)
	if err != nil {
		return fmt.Errorf("its folder %s is not a folder now (%v)", strings.TrimSuffix(dirRel, "/"), err)
	}
	defer unix.Close(parent)
	b := base[c.Path]
	var st unix.Stat_t
	exists := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	keepDir := exists && b != nil && b.Kind == "dir" && st.Mode&unix.S_IFMT == unix.S_IFDIR
	if exists && !keepDir {
		dst, err := mkdirAllAt(files, dirRel)
		if err != nil {
			return err
		}
		err = moveOut(parent, name, dst, name)
		unix.Close(dst)
		if err != nil {
			return fmt.Errorf("cannot move it to the quarantine: %w", err)
		}
		k.Kept = true
	}
	if b == nil {
		k.Restored = true // it did not exist
		return nil
	}
	if keepDir {
		fd, err := unix.Openat(parent, name, dirFlags, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Fchmod(fd, b.Mode); err != nil {
			return err
		}
		k.Restored = true
		return nil
	}
	if err := create(parent, name, b); err != nil {
		return err
	}
	if b.Kind == "dir" {
		// a folder that was replaced or removed: its whole tree comes back
		for i := range s.Entries {
			e := &s.Entries[i]
			if !below(c.Path, e.Path) {
				continue
			}
			d, n := path.Split(e.Path)
			fd, err := openDirAt(proj, d)
			if err != nil {
				return err
			}
			err = create(fd, n, e)
			unix.Close(fd)
			if err != nil {
				return fmt.Errorf("%s: %w", e.Path, err)
			}
		}
	}
	k.Restored = true
	return nil
}

// create makes entry e as name in folder dir, where nothing is.
func create(dir int, name string, e *Entry) error {
	switch e.Kind {
	case "dir":
		if err := unix.Mkdirat(dir, name, 0o700); err != nil {
			return err
		}
		fd, err := unix.Openat(dir, name, dirFlags, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Fchmod(fd, e.Mode)
	case "link":
		return unix.Symlinkat(e.Target, dir, name)
	case "file":
		if e.Data == nil {
			return fmt.Errorf("its content at the session's start was not kept (over %d bytes, or unreadable)", maxKept)
		}
		return writeAt(dir, name, e.Data, e.Mode)
	}
	return errors.New("not a file, folder or link; piagent cannot put it back")
}

// writeAt writes data as name in dir through a new file no one else can
// have opened, then renames it into place.
func writeAt(dir int, name string, data []byte, mode uint32) error {
	tmp := "." + name + ".piagent-" + newID()
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(os.FileMode(mode & 0o777))
		if err == nil && mode&^0o777 != 0 {
			err = unix.Fchmod(fd, mode)
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, name)
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
	}
	return err
}

// moveOut moves name in folder src to dstName in folder dst: a rename, or
// across file systems a copy and then the removal of the original.
func moveOut(src int, name string, dst int, dstName string) error {
	err := unix.Renameat(src, name, dst, dstName)
	if !errors.Is(err, unix.EXDEV) {
		return err
	}
	if err := copyAt(src, name, dst, dstName); err != nil {
		return err
	}
	return removeAt(src, name)
}

func copyAt(src int, name string, dst int, dstName string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(src, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		buf := make([]byte, 4096)
		n, err := unix.Readlinkat(src, name, buf)
		if err != nil {
			return err
		}
		return unix.Symlinkat(string(buf[:n]), dst, dstName)
	case unix.S_IFREG:
		if st.Size > maxCopy {
			return fmt.Errorf("%s is over %d MiB, too large to copy to the quarantine on another file system", name, maxCopy>>20)
		}
		in, err := unix.Openat(src, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		fin := os.NewFile(uintptr(in), name)
		defer fin.Close()
		out, err := unix.Openat(dst, dstName, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		fout := os.NewFile(uintptr(out), dstName)
		_, err = io.Copy(fout, io.LimitReader(fin, maxCopy))
		if err == nil {
			err = fout.Chmod(os.FileMode(st.Mode & 0o777))
		}
		if cerr := fout.Close(); err == nil {
			err = cerr
		}
		return err
	case unix.S_IFDIR:
		if err := unix.Mkdirat(dst, dstName, 0o700); err != nil {
			return err
		}
		sd, err := unix.Openat(src, name, dirFlags, 0)
		if err != nil {
			return err
		}
		dd, err := unix.Openat(dst, dstName, dirFlags, 0)
		if err != nil {
			unix.Close(sd)
			return err
		}
		defer unix.Close(dd)
		f := os.NewFile(uintptr(sd), name)
		defer f.Close()
		names, err := f.Readdirnames(-1)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := copyAt(sd, n, dd, n); err != nil {
				return err
			}
		}
		return nil
	}
	return errors.New("not a file, folder or link")
}

func removeAt(dir int, name string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unix.Unlinkat(dir, name, 0)
	}
	fd, err := unix.Openat(dir, name, dirFlags, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	names, err := f.Readdirnames(-1)
	for _, n := range names {
		if err == nil {
			err = removeAt(fd, n)
		}
	}
	f.Close()
	if err != nil {
		return err
	}
	return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
}

// openDirAt opens folder rel (slash-separated, "" for dir itself) under
// dir, one component at a time, following no link.
func openDirAt(dir int, rel string) (int, error) { return walkDirAt(dir, rel, false) }

// mkdirAllAt makes folder rel under dir (piagent's own quarantine) and
// opens it.
func mkdirAllAt(dir int, rel string) (int, error) { return walkDirAt(dir, rel, true) }

// walkDirAt opens folder rel under dir one component at a time, following
// no link and refusing "..", making each missing component when create is
// set.
func walkDirAt(dir int, rel string, create bool) (int, error) {
	fd, err := unix.Openat(dir, ".", dirFlags, 0)
	if err != nil {
		return -1, err
	}
	for _, c := range strings.Split(rel, "/") {
		if c == "" {
			continue
		}
		if c == ".." {
			unix.Close(fd)
			return -1, errors.New("a path that climbs out")
		}
		if create {
			if err := unix.Mkdirat(fd, c, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, err
			}
		}
		next, err := unix.Openat(fd, c, dirFlags, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

func newID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

func (q *Quarantine) save(home string) error {
	data, err := json.MarshalIndent(q, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteMode(filepath.Join(Folder(home, q.ID), "record.json"), append(data, '\n'), 0o600)
}

// List reads every quarantine, oldest first. A record piagent cannot read
// is listed with its ID alone and counts as unexamined for every project:
// the stricter side.
func List(home string) ([]*Quarantine, error) {
	entries, err := os.ReadDir(Dir(home))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var out []*Quarantine
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		q, err := Read(home, e.Name())
		if err != nil {
			q = &Quarantine{ID: e.Name(), Source: "unreadable record: " + err.Error()}
		}
		out = append(out, q)
	}
	return out, nil
}

// Read reads one quarantine's record.
func Read(home, id string) (*Quarantine, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return nil, fmt.Errorf("%q is not a quarantine", id)
	}
	p := filepath.Join(Folder(home, id), "record.json")
	if err := safefile.Check(p); err != nil {
		return nil, err
	}
	data, err := safefile.Read(p, safefile.Options{Max: 4 << 20})
	if err != nil {
		return nil, err
	}
	var q Quarantine
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if q.Version != 1 || q.ID != id {
		return nil, fmt.Errorf("%s: not a quarantine record of this piagent", p)
	}
	return &q, nil
}

// Pending are the quarantines of project nobody has examined yet.
func Pending(home, project string) ([]*Quarantine, error) {
	all, err := List(home)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(q *Quarantine) bool {
		return q.Examined != "" || (q.Project != "" && q.Project != project)
	}), nil
}

// Discard removes a quarantine: the person looked and what it holds was
// not theirs.
func Discard(home, id string) error {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return fmt.Errorf("%q is not a quarantine", id)
	}
	if _, err := os.Lstat(Folder(home, id)); err != nil {
		return fmt.Errorf("no quarantine %s", id)
	}
	return os.RemoveAll(Folder(home, id))
}

// Accept puts what a quarantine holds back in place: the person says the
// change was theirs. What is in place now (the restored version) goes to
// the quarantine's replaced/ folder; the record is marked accepted.
func Accept(home, id string) (*Quarantine, error) {
	q, err := Read(home, id)
	if err != nil {
		return nil, err
	}
	if q.Examined != "" {
		return q, fmt.Errorf("quarantine %s was already %s", id, q.Examined)
	}
	dir := Folder(home, id)
	if err := os.MkdirAll(filepath.Join(dir, "replaced"), 0o700); err != nil {
		return nil, err
	}
	files, err := unix.Open(filepath.Join(dir, "files"), dirFlags, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(files)
	replaced, err := unix.Open(filepath.Join(dir, "replaced"), dirFlags, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(replaced)
	proj, err := unix.Open(q.Project, dirFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot open the project %s: %w", q.Project, err)
	}
	defer unix.Close(proj)
	var errs []error
	for _, k := range q.Changes {
		if err := acceptOne(proj, files, replaced, k); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k.Path, err))
		}
	}
	if len(errs) > 0 {
		return q, errors.Join(errs...)
	}
	q.Examined = "accepted"
	return q, q.save(home)
}

func acceptOne(proj, files, replaced int, k Kept) error {
	dirRel, name := path.Split(k.Path)
	parent, err := openDirAt(proj, dirRel)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	var st unix.Stat_t
	if unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		dst, err := mkdirAllAt(replaced, dirRel)
		if err != nil {
			return err
		}
		err = moveOut(parent, name, dst, name)
		unix.Close(dst)
		if err != nil {
			return err
		}
	}
	if !k.Kept {
		return nil
	}
	src, err := openDirAt(files, dirRel)
	if err != nil {
		return err
	}
	defer unix.Close(src)
	return moveOut(src, name, parent, name)
}

// RestoreNested moves what changed since since in the repositories nested
// in the project that git enters from it (package gitnest: a config with
// core.fsmonitor, say) to a new quarantine. It returns nil and no error
// when nothing did.
func RestoreNested(home, project string, since time.Time, source string) (*Quarantine, error) {
	gitDir := gitnest.GitDir(project)
	if gitDir == "" {
		return nil, nil
	}
	links, err := gitnest.Links(gitDir)
	if err != nil {
		return nil, fmt.Errorf("cannot read the project's git index for nested repositories: %w", err)
	}
	risks := gitnest.Changed(project, links, since)
	if len(risks) == 0 {
		return nil, nil
	}
	changes := make([]Change, len(risks))
	for i, r := range risks {
		changes[i] = Change{Path: r.Path, What: "added"}
	}
	return Restore(home, &Snapshot{Project: project}, changes, source)
}
