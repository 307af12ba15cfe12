package cli

import (
	"runtime"
	"runtime/debug"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// BuildInfo is what `engine version` reports, from the binary's embedded
// build information.
type BuildInfo struct {
	Module     string `json:"module"`
	Version    string `json:"version"`               // the module version; "(devel)" for a source build
	Commit     string `json:"commit,omitempty"`      // VCS revision, when built from a checkout
	CommitTime string `json:"commit_time,omitempty"` // its time (RFC 3339)
	Dirty      bool   `json:"dirty"`                 // built with uncommitted changes
	Go         string `json:"go"`                    // the Go toolchain that built it
	Platform   string `json:"platform"`              // GOOS/GOARCH
}

func ReadBuildInfo() BuildInfo {
	b := BuildInfo{Module: "github.com/engine-dev/engine", Version: "(unknown)", Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if bi.Main.Path != "" {
		b.Module = bi.Main.Path
	}
	if bi.Main.Version != "" {
		b.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		b.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Dirty = s.Value == "true"
		}
	}
	return b
}

// String is the one-line form: "engine v1.2.3 (abc1234, dirty) go1.26.0 linux/amd64".
func (b BuildInfo) String() string {
	s := "engine " + b.Version
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if b.Dirty {
			c += ", dirty"
		}
		s += " (" + c + ")"
	}
	return s + " " + b.Go + " " + b.Platform
}

func init() {
	register([]string{"version"}, func(a *App) []*cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:   "version",
			Short: "Print the engine's version, VCS commit and Go version",
			Args:  cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				b := ReadBuildInfo()
				if asJSON {
					return PrintJSON(a.Stdout, b)
				}
				t := &Table{tw: tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)}
				t.Row("version", b.Version)
				commit := b.Commit
				switch {
				case commit == "":
					commit = "-"
				case b.Dirty:
					commit += " (dirty)"
				}
				t.Row("commit", commit)
				if b.CommitTime != "" {
					t.Row("commit time", b.CommitTime)
				}
				t.Row("go", b.Go)
				t.Row("platform", b.Platform)
				return t.Flush()
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return []*cobra.Command{c}
	})
}
