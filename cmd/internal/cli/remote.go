package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine/memory"
)

// StoreURL is the store memory lives in: --store, else ENGINE_STORE; ""
// is the data dir's embedded database.
func (a *App) StoreURL() string {
	if a.store != "" {
		return a.store
	}
	return os.Getenv("ENGINE_STORE")
}

// StoreOpener returns what opens the store of StoreURL (nil for the data
// dir's own database), for memory.Options and attach.Options.
func (a *App) StoreOpener() memory.StoreOpener {
	u := a.StoreURL()
	if u == "" || a.OpenStore == nil {
		return nil
	}
	return a.OpenStore.At(u)
}

// checkStore runs before every command: a store URL must name etcd; the
// engine binary, which does not link etcd's client (gRPC costs every
// short command milliseconds of start-up), hands a command on a shared
// store to engine-agent, which does.
func (a *App) checkStore(cmd *cobra.Command, _ []string) error {
	u := a.StoreURL()
	if u == "" {
		return nil
	}
	if !strings.HasPrefix(u, "etcd://") && !strings.HasPrefix(u, "etcds://") {
		return Usagef("store %q: want etcd://HOST:PORT[,HOST:PORT...] or etcds://... (or no --store for the data dir's own database)", u)
	}
	if a.OpenStore != nil {
		return nil
	}
	bin, err := agentBinary()
	if err != nil {
		return fmt.Errorf("engine %s on %s: %w", cmd.Name(), u, err)
	}
	return runAgent(bin, a.args, a)
}
