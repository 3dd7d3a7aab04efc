package policy

import "sync"

// matchMemo remembers which protected pattern a path form falls under. The
// answer depends only on the form, the policy's patterns and the home
// folder, none of which change while the policy lives, so nothing ever
// invalidates an entry; a policy with other patterns (WithSecrets) gets a
// memo of its own. An agent names the same few paths over and over, and a
// remembered answer costs one map lookup instead of a match against every
// pattern.
type matchMemo struct {
	mu   sync.Mutex
	home string
	m    map[memoKey]memoHit
}

type memoKey struct {
	form       string
	exemptRead bool
	shell      bool
}

type memoHit struct {
	pattern string
	hit     bool
}

// maxMemo bounds the memo; when it is full it starts again.
const maxMemo = 4096

func newMatchMemo() *matchMemo { return &matchMemo{m: make(map[memoKey]memoHit)} }

func (m *matchMemo) get(home string, k memoKey) (memoHit, bool) {
	if m == nil {
		return memoHit{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if home != m.home {
		return memoHit{}, false
	}
	h, ok := m.m[k]
	return h, ok
}

func (m *matchMemo) put(home string, k memoKey, h memoHit) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if home != m.home || len(m.m) >= maxMemo {
		clear(m.m)
		m.home = home
	}
	m.m[k] = h
}
