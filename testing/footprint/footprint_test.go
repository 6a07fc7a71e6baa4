package footprint

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const self = "github.com/openshift/hypershift-ecr"

// awsSDK is what the ECR client and sts:AssumeRole bring.
var awsSDK = []string{
	"github.com/aws/aws-sdk-go-v2",
	"github.com/aws/aws-sdk-go-v2/credentials",
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds",
	"github.com/aws/aws-sdk-go-v2/internal/configsources",
	"github.com/aws/aws-sdk-go-v2/internal/endpoints/v2",
	"github.com/aws/aws-sdk-go-v2/internal/v4a",
	"github.com/aws/aws-sdk-go-v2/service/ecr",
	"github.com/aws/aws-sdk-go-v2/service/internal/accept-encoding",
	"github.com/aws/aws-sdk-go-v2/service/internal/presigned-url",
	"github.com/aws/aws-sdk-go-v2/service/signin",
	"github.com/aws/aws-sdk-go-v2/service/sts",
	"github.com/aws/smithy-go",
}

// kubernetesAPI is what openshift/api, hypershift/api and k8s.io/kubelet
// bring; HyperShift vendors all of it already.
var kubernetesAPI = []string{
	"github.com/fxamacker/cbor/v2",
	"github.com/json-iterator/go",
	"github.com/modern-go/concurrent",
	"github.com/modern-go/reflect2",
	"github.com/x448/float16",
	"go.yaml.in/yaml/v2",
	"golang.org/x/net",
	"golang.org/x/text",
	"gopkg.in/inf.v0",
	"k8s.io/api",
	"k8s.io/apimachinery",
	"k8s.io/klog/v2",
	"k8s.io/kube-openapi",
	"sigs.k8s.io/json",
	"sigs.k8s.io/randfill",
	"sigs.k8s.io/structured-merge-diff/v6",
}

// registryClients is what go-containerregistry, docker/distribution and
// the Prometheus client bring.
var registryClients = []string{
	"github.com/beorn7/perks",
	"github.com/cespare/xxhash/v2",
	"github.com/containerd/stargz-snapshotter/estargz",
	"github.com/coreos/stream-metadata-go",
	"github.com/docker/cli",
	"github.com/docker/distribution",
	"github.com/docker/docker-credential-helpers",
	"github.com/docker/go-metrics",
	"github.com/google/go-containerregistry",
	"github.com/gorilla/mux",
	"github.com/klauspost/compress",
	"github.com/mitchellh/go-homedir",
	"github.com/munnerz/goautoneg",
	"github.com/opencontainers/image-spec",
	"github.com/prometheus/client_golang",
	"github.com/prometheus/client_model",
	"github.com/prometheus/common",
	"github.com/prometheus/procfs",
	"github.com/sirupsen/logrus",
	"github.com/vbatts/tar-split",
	"golang.org/x/sys",
	"google.golang.org/protobuf",
}

func join(lists ...[]string) []string { return slices.Concat(lists...) }

func TestFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	tests := []struct {
		name      string
		packages  []string
		allowed   []string
		forbidden []string
	}{
		{
			name:     "When HyperShift vendors the keychain path, it should bring the ECR client and nothing else",
			packages: []string{"pkg/ecrhost", "pkg/dockerconfig", "pkg/awsapi", "registryauth"},
			allowed:  join(awsSDK, []string{"github.com/go-logr/logr", "k8s.io/utils"}),
			forbidden: []string{"github.com/google/go-containerregistry", "github.com/docker/distribution",
				"github.com/prometheus/client_golang", "github.com/openshift/hypershift", "k8s.io/apimachinery"},
		},
		{
			name:     "When HyperShift vendors release resolution or node config, it should bring no registry client and no AWS SDK",
			packages: []string{"pkg/mirrorpolicy", "releaseinfo", "pkg/nodeconfig"},
			allowed: join(kubernetesAPI, []string{"github.com/distribution/reference", "github.com/opencontainers/go-digest",
				"github.com/openshift/api", "github.com/openshift/hypershift/api", "github.com/go-logr/logr",
				"golang.org/x/sync", "k8s.io/kubelet", "k8s.io/utils"}),
			forbidden: []string{"github.com/google/go-containerregistry", "github.com/docker/distribution",
				"github.com/aws/aws-sdk-go-v2", "github.com/prometheus/client_golang", "github.com/openshift/hypershift"},
		},
		{
			name: "When HyperShift vendors an adapter, it should bring only the client it adapts",
			packages: []string{"registryauth/distributionauth", "registryauth/ggcrauth", "registryauth/prommetrics",
				"registryauth/credentialprovider", "releaseinfo/ggcrprobe", "releaseinfo/remote"},
			allowed: join(awsSDK, kubernetesAPI, registryClients, []string{"github.com/distribution/reference",
				"github.com/opencontainers/go-digest", "github.com/openshift/api", "github.com/openshift/hypershift/api",
				"github.com/go-logr/logr", "golang.org/x/sync", "k8s.io/kubelet", "k8s.io/utils"}),
			forbidden: []string{"github.com/openshift/hypershift"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}"}
			for _, p := range tc.packages {
				args = append(args, self+"/"+p)
			}
			out, err := exec.Command("go", args...).CombinedOutput()
			require.NoError(t, err, "go list: %s", out)
			modules := slices.Compact(slices.Sorted(slices.Values(strings.Fields(string(out)))))
			for _, m := range modules {
				if m == self {
					continue
				}
				require.Contains(t, tc.allowed, m, "module %s entered %v; add it to the list only on purpose", m, tc.packages)
			}
			for _, m := range tc.forbidden {
				require.NotContains(t, modules, m)
			}
		})
	}
}
