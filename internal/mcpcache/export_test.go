package mcpcache

import (
	"math"
	"time"
)

// Helpers only the tests use.

// Fresh reports whether the named server's entry is young enough for the
// adapter to use it at time now: cachedAt must be set; with a ttlMs, the
// entry must be younger than the smaller of ttlMs and 7 days, and a ttlMs of
// 0 is never fresh; without one, it must be at most 7 days old. configHash
// is not checked (see the package comment).
func (c *Cache) Fresh(name string, now time.Time) bool {
	if c == nil {
		return false
	}
	e, ok := c.Servers[name]
	if !ok {
		return false
	}
	return e.Fresh(now)
}

// Fresh is Cache.Fresh for one entry.
func (e ServerEntry) Fresh(now time.Time) bool {
	if e.Err != nil || e.cachedAtMs == 0 {
		return false
	}
	const maxAgeMs = float64(MaxAge / time.Millisecond)
	age := float64(now.UnixMilli()) - e.cachedAtMs
	if e.HasTTL {
		ttl := float64(e.TTL / time.Millisecond)
		if ttl == 0 {
			return false
		}
		return age < math.Min(maxAgeMs, ttl)
	}
	return age <= maxAgeMs
}
