// Package fakeregistry runs an in-process container registry that behaves like Amazon ECR, for
// tests of code that resolves, authenticates to and reads from ECR mirrors of OpenShift release
// images.
//
// A Registry is go-containerregistry's in-memory registry (pkg/registry) behind a front end
// that reproduces what matters about ECR:
//
//   - Virtual host names. The registry answers to names such as
//     "123456789012.dkr.ecr.us-east-1.amazonaws.com" (DefaultHost) or "quay.io" (WithHost), with
//     a TLS certificate for those names signed by a CA created for the Registry. Clients reach it
//     through Transport or Client, whose dialer sends every configured name to the local
//     listener and refuses every other name, so pullspecs in tests look exactly like production
//     ones and nothing leaves the machine. The package function Transport combines several
//     registries (an "ECR" and a "quay.io") in one client. All names of one Registry share its
//     repositories, like the FIPS and dual-stack names of one ECR registry.
//   - Authentication. Unless WithAnonymous is given, every endpoint, /v2/ included, answers 401
//     with `WWW-Authenticate: Basic realm="https://<host>/",service="ecr.amazonaws.com"` unless
//     the request carries valid Basic credentials. The default accepts one static credential
//     (DefaultUsername and a random password; see Auth); WithBasicAuth sets it; WithAuthenticator
//     hands the decision to a function, for a fake ECR API whose tokens rotate and expire.
//     RevokeAll invalidates every credential accepted so far.
//   - Blobs by redirect. A blob GET is answered with 307 to a pre-signed-looking URL
//     (X-Amz-Signature, X-Amz-Expires, ...) on a second server with a host name of its own,
//     "prod-<region>-starport-layer-bucket.s3.<region>.amazonaws.com" by default. That server, like
//     S3, answers 400 InvalidArgument to any request carrying an Authorization header, 403 to a
//     missing, altered or expired signature, and serves Range requests so a client can resume.
//     Blob HEADs are answered by the registry itself.
//
// Stats, Requests and Reset let a test or benchmark count what a client did (pings, manifest
// requests, redirects, S3 bytes, 401s, Authorization headers sent to S3). FailNext, CutBlobAfter,
// Delete and RevokeAll inject failures. Push, PushIndex and Copy set a registry up; they bypass
// authentication, faults and counters. MirrorRelease sets up a whole mirrored release with them:
// a releasepayload release and its components published on a "quay.io" Registry and copied into
// one ECR repository, as `oc adm release mirror` leaves them.
//
// Everything is per Registry: there is no package state, and New registers the shutdown with
// t.Cleanup. Programs that are not tests (the hypershift-ecr demo) use Start and Close instead,
// and PushImage, PushImageIndex and CopyImage, which return errors rather than fail a test.
// New takes a testing.TB, so there is no runnable Example; a typical test reads:
//
//	quay := fakeregistry.New(t, fakeregistry.WithHost("quay.io"), fakeregistry.WithAnonymous())
//	ecr := fakeregistry.New(t) // 123456789012.dkr.ecr.us-east-1.amazonaws.com
//	src := quay.PushIndex(t, "quay.io/openshift-release-dev/ocp-release:4.10.3-multi", payload.Index)
//	dst := ecr.Copy(t, src, ecr.Host()+"/openshift-release-dev/ocp-release:4.10.3-multi", quay)
//	ecr.Reset()
//	ref, _ := name.ParseReference(dst)
//	idx, err := remote.Index(ref, remote.WithAuth(ecr.Auth()),
//		remote.WithTransport(fakeregistry.Transport(quay, ecr)))
//	// ... then assert on ecr.Stats(), e.g. Stats().S3WithAuthorization == 0.
package fakeregistry
