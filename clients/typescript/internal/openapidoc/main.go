// Command openapidoc prints the API's OpenAPI document (the one GET
// /v1/openapi.json serves) without a server: `npm run generate` makes the
// TypeScript client's types from it.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/engine-dev/engine/engine/api"
)

func main() {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(api.OpenAPI()); err != nil {
		fmt.Fprintln(os.Stderr, "openapidoc:", err)
		os.Exit(1)
	}
}
