package preflight

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
)

// cgnat is 100.64.0.0/10 (RFC 6598): VPCs may use it for pod and node
// addresses, so an endpoint there is inside the network.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// isPrivate reports whether addr is inside a private network: RFC 1918
// (10/8, 172.16/12, 192.168/16), 100.64/10, IPv6 unique local addresses
// (fc00::/7) and, so that tests on 127.0.0.1 behave like a VPC, loopback.
// An interface VPC endpoint always has such an address; ECR's public
// endpoints never do.
func isPrivate(addr netip.Addr) bool {
	addr = addr.Unmap()
	return addr.IsPrivate() || addr.IsLoopback() || cgnat.Contains(addr)
}

// publicAddrs returns the addresses of addrs that are not private; a
// string that is not an IP address counts as public.
func publicAddrs(addrs []string) []string {
	var pub []string
	for _, a := range addrs {
		ip, err := netip.ParseAddr(a)
		if err != nil || !isPrivate(ip) {
			pub = append(pub, a)
		}
	}
	return pub
}

// checkAPIEndpoint connects to the ECR API endpoint the keychain calls.
func (p *plan) checkAPIEndpoint(ctx context.Context) Check {
	return p.dial(ctx, CheckAPIEndpoint, p.apiAddr, true,
		"in a private VPC create the interface endpoint "+p.vpcService("ecr.api")+
			" (private DNS enabled, security group allowing 443 from the nodes), or point AWS_ENDPOINT_URL_ECR at it")
}

// checkS3 connects to the regional layer bucket ECR redirects blob GETs to.
func (p *plan) checkS3(ctx context.Context) Check {
	return p.dial(ctx, CheckS3LayerBucket, p.s3Addr, false,
		"ECR serves layers from S3: add an S3 gateway endpoint ("+p.vpcService("s3")+
			") to the route tables of the nodes' subnets, with a policy allowing arn:aws:s3:::prod-"+p.region+"-starport-layer-bucket/*")
}

// checkSTS connects to STS, which IRSA and assumed roles need for
// credentials before any ECR call.
func (p *plan) checkSTS(ctx context.Context) Check {
	if !p.cfg.UseSTS {
		return Check{Name: CheckSTSEndpoint, Status: StatusSkip, Detail: "not needed: no web identity (IRSA) or assumed role configured"}
	}
	return p.dial(ctx, CheckSTSEndpoint, p.stsAddr, true,
		"IRSA and assumed roles get credentials from STS: in a private VPC create the interface endpoint "+p.vpcService("sts")+" with private DNS enabled")
}

// dial checks that addr accepts a TCP connection. For an interface
// endpoint (interfaceEndpoint), a public remote address means the
// traffic leaves the VPC, which a zero-egress cluster cannot do.
func (p *plan) dial(ctx context.Context, name, addr string, interfaceEndpoint bool, hint string) Check {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	conn, err := p.cfg.Dialer(ctx, "tcp", addr)
	if err != nil {
		return Check{Name: name, Status: StatusFail, Detail: "cannot connect to " + addr + ": " + dialReason(err), Hint: hint, Err: err}
	}
	remote := conn.RemoteAddr().String()
	_ = conn.Close()
	c := Check{Name: name, Status: StatusPass, Detail: "connected to " + addr + " (" + remote + ")"}
	if host, _, err := net.SplitHostPort(remote); err == nil && interfaceEndpoint && !p.cfg.AllowPublic {
		if pub := publicAddrs([]string{host}); len(pub) > 0 {
			c.Status = StatusWarn
			c.Detail += ": a public address, the traffic leaves the VPC"
			c.Hint = hint
		}
	}
	return c
}

// dialReason shortens the usual dial errors to their cause.
func dialReason(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr):
		return "DNS: " + dnsErr.Err
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		return opErr.Err.Error()
	}
	return err.Error()
}

// checkRegistryDNS resolves the registry host. With the ecr.dkr interface
// endpoint and private DNS, the VPC's resolver answers with the endpoint's
// private addresses; without it, with ECR's public ones.
func (p *plan) checkRegistryDNS(ctx context.Context) Check {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	host := p.reg.Host
	hint := "in a private VPC create the interface endpoint " + p.vpcService("ecr.dkr") +
		" with private DNS enabled (the VPC needs enableDnsSupport and enableDnsHostnames)"
	addrs, err := p.cfg.LookupHost(ctx, host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no addresses")
	}
	if err != nil {
		return Check{Name: CheckRegistryDNS, Status: StatusFail, Detail: "cannot resolve " + host + ": " + dialReason(err), Hint: hint, Err: err}
	}
	c := Check{Name: CheckRegistryDNS, Status: StatusPass, Detail: host + " resolves to " + strings.Join(addrs, ", ")}
	// Any public address is a warning, not only "all public": a client may
	// pick it and leave the VPC.
	if pub := publicAddrs(addrs); len(pub) > 0 && !p.cfg.AllowPublic {
		c.Status = StatusWarn
		c.Detail += " (public: " + strings.Join(pub, ", ") + "; pulls would leave the VPC)"
		c.Hint = hint + "; ignore this when the cluster has internet egress"
	} else if len(pub) == 0 {
		c.Detail += " (private)"
	}
	return c
}
