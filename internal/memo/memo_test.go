package memo

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestGetComputesEachKeyOnceAcrossGoroutines(t *testing.T) {
	var m Map[string, int]
	var calls atomic.Int32
	var wg sync.WaitGroup
	got := make([]int, 50)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []string{"a", "b"}[i%2]
			v, err := m.Get(key, func() (int, error) {
				calls.Add(1)
				time.Sleep(10 * time.Millisecond) // let the others arrive
				return len(key) * 10, nil
			})
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 2 {
		t.Fatalf("compute called %d times for 2 keys", n)
	}
	for i, v := range got {
		if v != 10 {
			t.Fatalf("caller %d got %d", i, v)
		}
	}
}

func TestGetMemoizesErrors(t *testing.T) {
	var m Map[int, string]
	boom := errors.New("boom")
	calls := 0
	for range 3 {
		_, err := m.Get(1, func() (string, error) { calls++; return "", boom })
		if !errors.Is(err, boom) {
			t.Fatalf("err %v, want boom", err)
		}
	}
	if calls != 1 {
		t.Fatalf("a failing compute ran %d times, want once", calls)
	}
	if v, err := m.Get(2, func() (string, error) { return "two", nil }); v != "two" || err != nil {
		t.Fatalf("another key after an error: %q %v", v, err)
	}
}

func TestGetDoesNotBlockOtherKeys(t *testing.T) {
	var m Map[string, int]
	release := make(chan struct{})
	started := make(chan struct{})
	go m.Get("slow", func() (int, error) { close(started); <-release; return 0, nil })
	<-started
	done := make(chan struct{})
	go func() {
		m.Get("fast", func() (int, error) { return 1, nil })
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a key waited for another key's compute")
	}
	close(release)
}

func TestGetRepeatsAPanic(t *testing.T) {
	var m Map[string, int]
	for i := range 2 {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("call %d did not panic", i)
				}
			}()
			m.Get("p", func() (int, error) { panic("compute failed") })
		}()
	}
}

func TestHasTellsWhetherAKeyWasAskedFor(t *testing.T) {
	var m Map[string, int]
	if m.Has("a") {
		t.Fatal("an empty map has a")
	}
	if _, err := m.Get("a", func() (int, error) { return 0, errors.New("failed") }); err == nil {
		t.Fatal("want the error")
	}
	if !m.Has("a") || m.Has("b") {
		t.Fatalf("after a failed Get of a: Has(a)=%v Has(b)=%v", m.Has("a"), m.Has("b"))
	}
}

func TestExistingNeverComputes(t *testing.T) {
	var m Map[string, int]
	if _, ok := m.Existing("a"); ok {
		t.Fatal("an empty map has a")
	}
	if _, err := m.Get("a", func() (int, error) { return 7, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get("b", func() (int, error) { return 0, errors.New("failed") }); err == nil {
		t.Fatal("want the error")
	}
	if v, ok := m.Existing("a"); !ok || v != 7 {
		t.Fatalf("Existing(a) = %d, %v", v, ok)
	}
	if _, ok := m.Existing("b"); ok {
		t.Fatal("Existing of a failed computation is ok")
	}
	if _, ok := m.Existing("c"); ok || m.Has("c") {
		t.Fatal("Existing of c made an entry for it")
	}
}
