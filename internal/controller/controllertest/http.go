package controllertest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
)

// FreeAddr is a local address no one listens on.
func FreeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Get GETs url, retried until it answers, and returns its status and
// body.
func Get(t *testing.T, url string) (int, string) {
	t.Helper()
	var resp *http.Response
	var err error
	devtest.Eventually(t, 30*time.Second, func() bool {
		resp, err = http.Get(url)
		return err == nil
	}, func() string { return fmt.Sprintf("GET %s: %v", url, err) })
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}
