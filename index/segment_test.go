package index

import (
	"maps"
	"testing"
)

// payloadsOf returns every payload ps holds, as "model/name" → id →
// payload, reading the segments through their entries and the tails.
func payloadsOf(t testing.TB, ps *payloadStore) map[string]map[string]string {
	t.Helper()
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	out := map[string]map[string]string{}
	for name, s := range ps.sets {
		m := map[string]string{}
		if s.seg != nil {
			for i := range s.seg.count {
				id, err := s.seg.id(i)
				if err != nil {
					t.Fatal(err)
				}
				v, err := s.seg.value(i)
				if err != nil {
					t.Fatal(err)
				}
				m[string(id)] = string(v)
			}
		}
		for id, b := range s.tail {
			if b == nil {
				delete(m, id)
			} else {
				m[id] = string(b)
			}
		}
		if len(m) != s.live {
			t.Fatalf("%s holds %d payloads, live says %d", name, len(m), s.live)
		}
		out[s.model+"/"+name] = maps.Clone(m)
	}
	return out
}
