//go:build !linux

package agent

import "errors"

// swapFiles is not available here: replacer renames each version over
// the last.
func swapFiles(a, b string) error { return errors.ErrUnsupported }
