package agentcmd

import (
	"context"
	"os"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/etcd"
)

// openStore opens the shared store at url (--store, ENGINE_STORE): etcd,
// with its credentials and certificates from the environment. engine-agent
// links etcd's client; the engine binary hands such commands here.
func openStore(ctx context.Context, url string) (kv.Store, error) {
	o, err := etcd.ParseURL(url)
	if err != nil {
		return nil, engine.MarkInvalid(err)
	}
	o.Username, o.Password = os.Getenv("ENGINE_ETCD_USER"), os.Getenv("ENGINE_ETCD_PASSWORD")
	if err := o.TLSFiles(os.Getenv("ENGINE_ETCD_CA"), os.Getenv("ENGINE_ETCD_CERT"), os.Getenv("ENGINE_ETCD_KEY")); err != nil {
		return nil, engine.MarkInvalid(err)
	}
	return etcd.Open(ctx, o)
}
