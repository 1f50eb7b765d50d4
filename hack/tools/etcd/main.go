// Command etcd is etcd's own main, built from go.etcd.io/etcd/server/v3 at
// the version k8s.io/kubernetes requires.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
