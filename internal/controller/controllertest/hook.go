package controllertest

import (
	"encoding/json"
	"net/http"
	"sync"
)

// Hook is an HTTP endpoint that records the JSON documents posted to it.
type Hook struct {
	mu   sync.Mutex
	docs []map[string]any
}

func (h *Hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var doc map[string]any
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&doc) != nil {
		http.Error(w, "want a JSON POST", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.docs = append(h.docs, doc)
	h.mu.Unlock()
}

// Received are the documents posted so far.
func (h *Hook) Received() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.docs...)
}
