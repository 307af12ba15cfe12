package etcd

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
)

// ParseURL reads a store URL: etcd://HOST:PORT[,HOST:PORT…] (plain), or
// etcds://… (TLS with the system's roots; TLSFiles adds a CA and a client
// certificate).
func ParseURL(u string) (Options, error) {
	var o Options
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok || (scheme != "etcd" && scheme != "etcds") {
		return o, fmt.Errorf("store %q: want etcd://HOST:PORT[,HOST:PORT...] or etcds://HOST:PORT[,...]", u)
	}
	rest = strings.TrimSuffix(rest, "/")
	web := "http://"
	if scheme == "etcds" {
		web = "https://"
		o.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	for ep := range strings.SplitSeq(rest, ",") {
		if ep == "" || strings.ContainsAny(ep, "/@?# ") || !strings.Contains(ep, ":") {
			return o, fmt.Errorf("store %q: endpoint %q is not HOST:PORT", u, ep)
		}
		o.Endpoints = append(o.Endpoints, web+ep)
	}
	return o, nil
}

// TLSFiles adds to o.TLS the CA certificate in caFile (when not "") and
// the client certificate and key in certFile and keyFile (when not "").
func (o *Options) TLSFiles(caFile, certFile, keyFile string) error {
	if caFile == "" && certFile == "" && keyFile == "" {
		return nil
	}
	if o.TLS == nil {
		return fmt.Errorf("etcd: a CA or client certificate needs an etcds:// store")
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return fmt.Errorf("etcd: CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("etcd: CA certificate %s: no PEM certificate in it", caFile)
		}
		o.TLS.RootCAs = pool
	}
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return fmt.Errorf("etcd: client certificate: %w", err)
		}
		o.TLS.Certificates = []tls.Certificate{cert}
	}
	return nil
}
