package planner_test

import (
	"os"
	"testing"

	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
)

var cluster = devtest.New()

func TestMain(m *testing.M) { os.Exit(cluster.Run(m)) }
