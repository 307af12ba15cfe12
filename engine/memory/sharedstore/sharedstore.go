// Package sharedstore opens the shared store memory lives in from its URL
// (--store, ENGINE_STORE): etcd, with its credentials and certificates from
// the environment. Only engine-agent links it, and with it etcd's client
// (gRPC); the engine binary hands commands on a shared store to
// engine-agent.
package sharedstore

import (
	"context"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/etcd"
)

// Opener returns the opener of shared stores whose credentials and
// certificates getenv reads (os.Getenv): ENGINE_ETCD_USER and
// ENGINE_ETCD_PASSWORD, and for etcds:// ENGINE_ETCD_CA, ENGINE_ETCD_CERT
// and ENGINE_ETCD_KEY. A URL or a certificate it cannot use is bad input
// (engine.ErrInvalid).
func Opener(getenv func(string) string) memory.SharedOpener {
	return func(ctx context.Context, url string) (kv.Store, error) {
		o, err := etcd.ParseURL(url)
		if err != nil {
			return nil, engine.MarkInvalid(err)
		}
		o.Username, o.Password = getenv("ENGINE_ETCD_USER"), getenv("ENGINE_ETCD_PASSWORD")
		if err := o.TLSFiles(getenv("ENGINE_ETCD_CA"), getenv("ENGINE_ETCD_CERT"), getenv("ENGINE_ETCD_KEY")); err != nil {
			return nil, engine.MarkInvalid(err)
		}
		return etcd.Open(ctx, o)
	}
}
