// Command etcd is the upstream etcd server, built from the pinned go.etcd.io/etcd/server/v3
// module (the root etcd module carries replace directives and cannot be installed directly).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
