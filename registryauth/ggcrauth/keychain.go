package ggcrauth

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/openshift/hypershift-ecr/registryauth"
)

// Keychain is a go-containerregistry authn.Keychain and authn.ContextKeychain
// for Amazon ECR registries. The zero value resolves everything to
// authn.Anonymous; make a useful one with NewKeychain.
type Keychain struct {
	src registryauth.CredentialSource
}

var (
	_ authn.Keychain        = (*Keychain)(nil)
	_ authn.ContextKeychain = (*Keychain)(nil)
)

// NewKeychain returns a keychain that serves ECR registries from src,
// typically the process's *registryauth.Keychain.
func NewKeychain(src registryauth.CredentialSource) *Keychain {
	return &Keychain{src: src}
}

// Resolve is ResolveContext with context.Background().
func (k *Keychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), r)
}

// ResolveContext returns an authenticator for the registry of r.
//
// A registry that is not ECR, or is ECR Public, resolves to authn.Anonymous
// with no error: "not mine", so that authn.NewMultiKeychain asks the next
// keychain. For an ECR registry it fetches a credential now, so that a
// failure is returned here, wrapped (errors.Is with the registryauth
// sentinels still works), and is never turned into anonymous access.
//
// The authenticator asks the source again on each use (a memory read on a
// warm keychain), so a long-lived transport follows token rotation instead
// of keeping a token until it expires.
func (k *Keychain) ResolveContext(ctx context.Context, r authn.Resource) (authn.Authenticator, error) {
	if k == nil || k.src == nil {
		return authn.Anonymous, nil
	}
	host := r.RegistryStr()
	// The credential itself is fetched again by the authenticator; this
	// lookup decides "mine or not" and surfaces failures early.
	_, err := k.src.Credential(ctx, host)
	switch {
	case err == nil:
		return &authenticator{src: k.src, host: host}, nil
	case errors.Is(err, registryauth.ErrNotECR), errors.Is(err, registryauth.ErrPublicRegistry):
		return authn.Anonymous, nil
	default:
		return nil, fmt.Errorf("ggcrauth: resolving credentials for %s: %w", host, err)
	}
}

// authenticator serves one ECR registry. It implements
// authn.ContextAuthenticator so that lookups use the request's context.
type authenticator struct {
	src  registryauth.CredentialSource
	host string
}

func (a *authenticator) Authorization() (*authn.AuthConfig, error) {
	return a.AuthorizationContext(context.Background())
}

func (a *authenticator) AuthorizationContext(ctx context.Context) (*authn.AuthConfig, error) {
	cred, err := a.src.Credential(ctx, a.host)
	if err != nil {
		return nil, fmt.Errorf("ggcrauth: credentials for %s: %w", a.host, err)
	}
	return &authn.AuthConfig{Username: cred.Username, Password: cred.Password}, nil
}

// String names the registry only, in case the authenticator is printed.
func (a *authenticator) String() string { return "ECR credentials for " + a.host }

// Forget passes on to the source, when it has one (the registryauth
// Keychain does), the news that a registry rejected its credential for
// host, so that the next lookup fetches a new one. Readers that see the 401
// (releaseinfo/remote) find it through this method.
func (k *Keychain) Forget(host string) {
	if f, ok := k.src.(interface{ Forget(string) }); ok {
		f.Forget(host)
	}
}
