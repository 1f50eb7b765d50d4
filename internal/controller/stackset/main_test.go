package stackset_test

import (
	"os"
	"testing"

	"github.com/convoy-sh/convoy/internal/controller/controllertest"
)

// TestMain runs the StackSet integration tests against the devcluster
// (controllertest), which is also the first of the fleet's clusters.
func TestMain(m *testing.M) { os.Exit(controllertest.Main(m)) }
