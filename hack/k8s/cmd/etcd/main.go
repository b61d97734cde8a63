// Command etcd is the etcd server built from go.etcd.io/etcd/server/v3, because the
// etcd in Debian is older than the health endpoints Kubernetes 1.31+ asks for.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
