// Package memo computes a value once per key and shares it between
// goroutines: the load-once caches of a single run (charts, record lists).
package memo

import "sync"

// Map computes each key's value at most once and shares the result, error
// included, with every caller of Get for that key. The zero value is ready
// to use; a Map must not be copied after first use.
type Map[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]func() (V, error)
}

// Get returns the value of key, calling compute to produce it if no caller
// has yet. Concurrent callers of the same key wait for the first one's
// compute and get its result (an error too: it is not retried), so compute
// must not depend on its caller (a cancelled context, say) in a way the
// others would not want to share. Callers of other keys do not wait. A
// compute that panics panics in every caller of its key.
func (m *Map[K, V]) Get(key K, compute func() (V, error)) (V, error) {
	m.mu.Lock()
	get, ok := m.entries[key]
	if !ok {
		if m.entries == nil {
			m.entries = map[K]func() (V, error){}
		}
		get = sync.OnceValues(compute)
		m.entries[key] = get
	}
	m.mu.Unlock()
	return get()
}

// Has reports whether key's value was asked for: computed, being computed,
// or failed.
func (m *Map[K, V]) Has(key K) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.entries[key]
	return ok
}

// Existing is key's value when it was asked for (waiting for it while it
// is being computed); ok is false when it was not, or its computation
// failed. It never computes.
func (m *Map[K, V]) Existing(key K) (v V, ok bool) {
	m.mu.Lock()
	get, asked := m.entries[key]
	m.mu.Unlock()
	if !asked {
		return v, false
	}
	v, err := get()
	return v, err == nil
}
