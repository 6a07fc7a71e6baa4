package registryauth

import (
	"context"
	"time"

	"github.com/openshift/hypershift-ecr/pkg/awsapi"
)

// ECRAPI is the ECR call the keychain makes. The real *ecr.Client satisfies
// it; tests and HyperShift inject fakes (see testing/fakeecr).
type ECRAPI = awsapi.ECRAPI

// ClientFactory builds the ECR API client for one registry: its region,
// partition and endpoint variant. It is called only on a cache miss.
type ClientFactory = awsapi.ECRClientFactory

// Credential is a registry login valid until ExpiresAt.
type Credential struct {
	// Registry is the registry host the credential was requested for.
	Registry string
	// Username is always "AWS" for ECR.
	Username string
	// Password is the ECR authorization token's password part. It is a
	// secret: never log it, never put it in an error or a Kubernetes object.
	Password string `datapolicy:"token"`
	// ExpiresAt is when ECR stops accepting the password.
	ExpiresAt time.Time
}

// String redacts the password so that a Credential passed to a logger or a
// format verb by mistake leaks nothing.
func (c Credential) String() string {
	return "Credential{Registry:" + c.Registry + " Username:" + c.Username + " Password:<redacted> ExpiresAt:" + c.ExpiresAt.UTC().Format(time.RFC3339) + "}"
}

// GoString redacts the password for %#v as well.
func (c Credential) GoString() string { return c.String() }

// CredentialSource is what registry-client adapters need from a keychain.
// *Keychain implements it. Credential returns an error matching ErrNotECR
// for a host that is not an ECR registry ("not mine", not a failure).
type CredentialSource interface {
	Credential(ctx context.Context, registryHostOrImage string) (Credential, error)
}

var _ CredentialSource = (*Keychain)(nil)
