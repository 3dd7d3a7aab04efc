package policy

import (
	"strings"
	"testing"
)

// red4Facts are testFacts with a link in the project to a folder of the
// home (cfg -> ~/.config), as `ln -s ~/.config cfg` (allowed) makes one.
func red4Facts() Facts {
	f := testFacts()
	f.RealPath = func(p string) (string, bool) {
		const from, to = "/home/u/proj/cfg", "/home/u/.config"
		if p == from {
			return to, true
		}
		if strings.HasPrefix(p, from+"/") {
			return to + p[len(from):], true
		}
		return fakeRealPath(p)
	}
	return f
}

// TestRed4StartupFilesOtherWays: the start-up files written by ways the
// first rule missed: a copy or link into the home folder (the file it
// creates is DEST/<base of the source>), a folder moved or copied over a
// parent of one (~/.local, ~/.gradle, ~/.config/go), a hard link made in
// the project and then written by Pi's write tool or the shell, go env -w
// (~/.config/go/env), ".." after a link (the kernel takes ".." where the
// link leads), and a file opened for reading on a descriptor and then
// opened again for writing through /dev/stdin, /dev/fd/N or /proc/self.
func TestRed4StartupFilesOtherWays(t *testing.T) {
	t.Parallel()
	p := mustMerge(t, "", "")
	for _, cmd := range []string{
		// into the home folder: DEST/<base>
		"cp .bashrc ~",
		"cp .bashrc ~/",
		"cp -t ~ .bashrc",
		"cp --target-directory=/home/u .bashrc",
		"ln -t ~ .bashrc",
		"install -t ~ .profile",
		"cp -r bin ~/.local/",
		// a parent folder replaced or filled from the project
		"mv z ~/.local",
		"cp -r z ~/.local",
		"mv z ~/.gradle",
		"mv z ~/.cargo",
		"mv z ~/.config/go",
		"mv z ~/.config/systemd",
		"mv z ~/.gemini",
		"rsync -a z/ ~/.local/",
		// hard links: the project's name is the home's file
		"ln ~/.bashrc hard",
		"ln -f ~/.local/bin/git g",
		"link ~/.bashrc hard",
		"cp -l ~/.bashrc hard",
		"cp --link ~/.gitconfig g",
		"cp -al ~/.config/git gitdir",
		// go env -w writes ~/.config/go/env (GOFLAGS=-toolexec runs at the next build)
		"go env -w GOFLAGS=-toolexec=/tmp/evil",
		"go env -u GOFLAGS",
		"GOENV=~/.bashrc go env -w 'GOFLAGS=-x=$(evil)'",
		"export GOENV=/home/u/.profile; go env -w GOFLAGS=-x",
		// ".." after a link
		"echo x > cfg/../.bashrc",
		"cp evil cfg/../.profile",
		"echo x > /proc/self/cwd/../.bashrc",
		"cd cfg && echo x > ../.bashrc",
		"cd cfg && cp evil ../.profile",
		"cd -P cfg/.. && echo x > .bashrc",
		"set -P; cd cfg/.. && echo x > .bashrc",
		"set -o physical; cd cfg/.. && echo x > .bashrc",
		"CDPATH=/home/u; cd .config && echo x > ../.bashrc",
		"CDPATH=/home; cd u && echo x > .bashrc",
		"cd ~/.config && echo x > /proc/self/cwd/git/config",
		"cd ~ && echo x > /proc/thread-self/cwd/.bashrc",
		// a descriptor opened for reading, opened again for writing
		"cp evil /dev/stdin < ~/.bashrc",
		"cp evil /dev/fd/3 3< ~/.bashrc",
		"cp evil /proc/self/fd/3 3< ~/.bashrc",
		"tee /dev/stdin < ~/.gitconfig",
		"exec 2<~/.bashrc; echo x >/dev/stderr",
		"echo x 3<~ > /proc/self/fd/3/.bashrc",
		"echo x 3<~ > /dev/fd/3/.bashrc",
	} {
		if d := p.Decide(call("bash", "command", cmd), red4Facts()); d.Action != ActionBlock {
			t.Errorf("bash %q: %s %s, want a block", cmd, d.Action, d.Code)
		}
	}
	for _, cmd := range []string{
		// controls: the project, a folder in the home that holds no start-up file
		"cp a.txt b.txt",
		"cp -t dist a.js b.js",
		"mv build out",
		"cp notes.md ~/backup/",
		"mv notes.md ~/notes/",
		"ln -s ~/.bashrc bashrc-link",
		"ln a.txt b.txt",
		"go env GOPATH",
		"cd cfg/.. && echo x > notes.txt",
		"cd src && echo x > ../notes.txt",
		"go build ./...",
		"echo x > /dev/null",
		"echo x >&2",
		"echo x > /dev/stderr",
		"cat ~/.bashrc",
		"diff - ~/.bashrc < a.txt",
		"cat < ~/.bashrc > copy.txt",
	} {
		if d := p.Decide(call("bash", "command", cmd), red4Facts()); d.Action != ActionAllow {
			t.Errorf("control bash %q: %s %s (%s), want it allowed", cmd, d.Action, d.Code, d.Reason)
		}
	}
}
