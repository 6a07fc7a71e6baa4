package registryauth

import (
	"context"
	"net/url"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

// ClientOption tunes the ECR clients that NewClientFactory makes.
type ClientOption func(*awsClients)

// WithEndpoint sends every ECR API call to url, e.g. an interface VPC
// endpoint "https://vpce-0abc-xyz.api.ecr.us-east-1.vpce.amazonaws.com". It
// overrides AWS_ENDPOINT_URL_ECR. A custom endpoint disables the FIPS and
// dual-stack endpoint variants (the SDK refuses them together), so point it
// at a FIPS endpoint yourself when the registry is FIPS.
func WithEndpoint(url string) ClientOption {
	return func(a *awsClients) { a.endpoint = url }
}

// WithSTSClient sets the client used for sts:AssumeRole by WithRegistryRole.
// The default is sts.NewFromConfig of the keychain's AWS config.
func WithSTSClient(c stscreds.AssumeRoleAPIClient) ClientOption {
	return func(a *awsClients) { a.sts = c }
}

// NewClientFactory returns a ClientFactory making real ECR clients from cfg.
// Each client is bound to the registry's region. The API endpoint variant
// follows the registry host: FIPS for "dkr.ecr-fips"/"dkr-ecr-fips" hosts,
// dual-stack for "dkr-ecr" hosts, the partition's default otherwise, unless
// a custom endpoint (WithEndpoint, AWS_ENDPOINT_URL_ECR, AWS_ENDPOINT_URL or
// the shared config's services section) is configured, which always wins.
// Clients are cached, so the factory is cheap to call repeatedly.
func NewClientFactory(cfg aws.Config, opts ...ClientOption) ClientFactory {
	a := newAWSClients(cfg, opts...)
	return func(ctx context.Context, reg ecrhost.Registry) (ECRAPI, error) {
		return a.client(reg, Identity{}), nil
	}
}

// Identity is who calls ECR: the AWS config's own principal (zero value) or
// a role assumed for some registries.
type Identity struct {
	RoleARN    string
	ExternalID string
}

type clientKey struct {
	identity        Identity
	region          string
	fips, dualStack bool
}

type awsClients struct {
	cfg      aws.Config
	endpoint string
	sts      stscreds.AssumeRoleAPIClient

	mu        sync.Mutex
	clients   map[clientKey]*ecr.Client
	roleCreds map[Identity]aws.CredentialsProvider
}

func newAWSClients(cfg aws.Config, opts ...ClientOption) *awsClients {
	a := &awsClients{
		cfg:       cfg.Copy(),
		clients:   map[clientKey]*ecr.Client{},
		roleCreds: map[Identity]aws.CredentialsProvider{},
	}
	for _, o := range opts {
		o(a)
	}
	return a
}

func (a *awsClients) client(reg ecrhost.Registry, id Identity) *ecr.Client {
	key := clientKey{identity: id, region: reg.Region, fips: reg.FIPS, dualStack: reg.DualStack}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.clients[key]; ok {
		return c
	}
	creds := a.cfg.Credentials
	if id != (Identity{}) {
		creds = a.assumedRole(id)
	}
	c := ecr.NewFromConfig(a.cfg, func(o *ecr.Options) {
		o.Region = reg.Region
		o.Credentials = creds
		if a.endpoint != "" {
			o.BaseEndpoint = aws.String(a.endpoint)
		}
		// The SDK rejects FIPS or dual-stack together with a custom endpoint,
		// and a VPC endpoint is the operator's explicit choice: keep it.
		o.EndpointOptions.UseFIPSEndpoint = aws.FIPSEndpointStateDisabled
		o.EndpointOptions.UseDualStackEndpoint = aws.DualStackEndpointStateDisabled
		if o.BaseEndpoint == nil {
			if reg.FIPS {
				o.EndpointOptions.UseFIPSEndpoint = aws.FIPSEndpointStateEnabled
			}
			if reg.DualStack {
				o.EndpointOptions.UseDualStackEndpoint = aws.DualStackEndpointStateEnabled
			}
		}
	})
	a.clients[key] = c
	return c
}

// assumedRole returns one cached credentials provider per role, so STS is
// called once per role and session, not once per registry or region.
func (a *awsClients) assumedRole(id Identity) aws.CredentialsProvider {
	if p, ok := a.roleCreds[id]; ok {
		return p
	}
	stsClient := a.sts
	if stsClient == nil {
		stsClient = sts.NewFromConfig(a.cfg)
	}
	p := aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient, id.RoleARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = "hypershift-ecr"
		if id.ExternalID != "" {
			o.ExternalID = aws.String(id.ExternalID)
		}
	}))
	a.roleCreds[id] = p
	return p
}

// endpointLabel names, for errors and hints, where calls for reg go. A
// custom URL is reduced to scheme and host: a URL may carry credentials.
func (a *awsClients) endpointLabel(reg ecrhost.Registry) string {
	if a != nil {
		if base := a.client(reg, Identity{}).Options().BaseEndpoint; base != nil {
			if u, err := url.Parse(*base); err == nil && u.Host != "" {
				return u.Scheme + "://" + u.Host
			}
			return "custom endpoint"
		}
	}
	return reg.EndpointVariant()
}
