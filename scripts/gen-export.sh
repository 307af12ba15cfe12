#!/bin/sh
# gen-export.sh N writes to stdout an export document of N generated
# lessons over 50 sites, the input the bench scripts import (bench-serve,
# bench-import, bench-cli): one shape, so their figures compare.
set -eu
awk -v n="$1" 'BEGIN {
	printf "{\"format\":\"engine-export\",\"version\":1,\"exported_at\":\"2026-03-01T00:00:00Z\",\"lessons\":["
	for (i = 0; i < n; i++) {
		site = "site" (i % 50) ".example"
		printf "%s{\"lesson\":\"scroll the element into view and wait for the overlay to close before clicking it again (%d)\",\"category\":\"error_recovery\",\"failed_command\":\"click\",\"error_pattern\":\"not visible %d\",\"domain\":\"%s\",\"use_count\":%d,\"created_at\":\"2026-03-01\",\"last_used\":\"2026-03-01\",\"source\":\"learned\",\"triggered_domains\":[\"%s\"]}", (i ? "," : ""), i, i, site, i % 7, site
	}
	printf "]}\n"
}'
