package loader

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-plugin"
)

// secureConfig reads a sha256sum-style checksum file and returns go-plugin's
// SecureConfig for the plugin at path. A line names the plugin by its
// absolute path, or by a path whose file name is the plugin's (as
// `sha256sum dir/engine-plugin-x` writes it); an exact path wins. A plugin
// not listed is refused.
func secureConfig(file, path string) (*plugin.SecureConfig, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("checksum file: %w", err)
	}
	defer f.Close()
	base := filepath.Base(path)
	var byBase []byte
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("checksum file %s:%d: want \"SHA256HEX  NAME\"", file, n)
		}
		name := strings.TrimPrefix(fields[1], "*") // sha256sum's binary mark
		if name != path && filepath.Base(name) != base {
			continue
		}
		sum, err := hex.DecodeString(fields[0])
		if err != nil || len(sum) != sha256.Size {
			return nil, fmt.Errorf("checksum file %s:%d: %q is not a sha256 in hex", file, n, fields[0])
		}
		if name == path {
			return &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()}, nil
		}
		if byBase == nil {
			byBase = sum
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("checksum file: %w", err)
	}
	if byBase != nil {
		return &plugin.SecureConfig{Checksum: byBase, Hash: sha256.New()}, nil
	}
	return nil, fmt.Errorf("refusing to start: not pinned in checksum file %s: %w", file, ErrChecksum)
}
