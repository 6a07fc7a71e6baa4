package ecrhost

import (
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// kubeletMatches reports whether the kubelet would hand image to a
// credential provider configured with matchImages glob. It follows
// k8s.io/kubernetes pkg/credentialprovider URLsMatchStr: both sides get an
// "https://" prefix and are parsed as URLs, ports must be equal, hosts must
// have the same number of labels and each glob label must filepath.Match
// its label, and the glob's path must be a prefix of the image's path.
func kubeletMatches(t testing.TB, glob, image string) bool {
	t.Helper()
	globURL, err := url.Parse("https://" + glob)
	require.NoError(t, err, "glob %q", glob)
	imageURL, err := url.Parse("https://" + image)
	if err != nil {
		return false
	}
	globLabels, globPort := kubeletSplitHost(globURL)
	imageLabels, imagePort := kubeletSplitHost(imageURL)
	if globPort != imagePort || len(globLabels) != len(imageLabels) ||
		!strings.HasPrefix(imageURL.Path, globURL.Path) {
		return false
	}
	for i, g := range globLabels {
		matched, err := filepath.Match(g, imageLabels[i])
		require.NoError(t, err, "glob %q", glob)
		if !matched {
			return false
		}
	}
	return true
}

func kubeletSplitHost(u *url.URL) (labels []string, port string) {
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, ""
	}
	return strings.Split(host, "."), port
}

func anyKubeletMatch(t testing.TB, globs []string, image string) bool {
	t.Helper()
	return slices.ContainsFunc(globs, func(g string) bool { return kubeletMatches(t, g, image) })
}

// stockOpenShiftMatchImages is the matchImages list MCO writes for
// ecr-credential-provider on AWS workers (OCP >= 4.16).
var stockOpenShiftMatchImages = []string{
	"*.dkr.ecr.*.amazonaws.com",
	"*.dkr.ecr.*.amazonaws.com.cn",
	"*.dkr.ecr-fips.*.amazonaws.com",
	"*.dkr.ecr.us-iso-east-1.c2s.ic.gov",
	"*.dkr.ecr.us-isob-east-1.sc2s.sgov.gov",
}

func TestMatchImages(t *testing.T) {
	t.Run("When called, it should return one glob per distinct form in table order", func(t *testing.T) {
		require.Equal(t, []string{
			"*.dkr.ecr.*.amazonaws.com",
			"*.dkr.ecr-fips.*.amazonaws.com",
			"*.dkr-ecr.*.on.aws",
			"*.dkr-ecr-fips.*.on.aws",
			"*.dkr.ecr.*.amazonaws.com.cn",
			"*.dkr-ecr.*.on.amazonwebservices.com.cn",
			"*.dkr.ecr.*.amazonaws.eu",
			"*.dkr.ecr.*.c2s.ic.gov",
			"*.dkr.ecr.*.sc2s.sgov.gov",
			"*.dkr.ecr.*.cloud.adc-e.uk",
			"*.dkr.ecr.*.csp.hci.ic.gov",
			"public.ecr.aws",
			"ecr-public.aws.com",
		}, MatchImages())
	})

	t.Run("When the caller modifies the result, it should not affect later calls", func(t *testing.T) {
		first := MatchImages()
		first[0] = "mutated"
		require.Equal(t, "*.dkr.ecr.*.amazonaws.com", MatchImages()[0])
	})

	t.Run("When the kubelet sees any table example, it should match at least one glob", func(t *testing.T) {
		globs := MatchImages()
		for _, f := range forms {
			for _, image := range []string{f.example, f.example + "/team/app:latest", f.example + "/team/app@" + digest} {
				require.True(t, anyKubeletMatch(t, globs, image), "no glob matches %q", image)
			}
		}
	})

	t.Run("When a host matches a glob, it should parse", func(t *testing.T) {
		// Candidates built by filling each glob's wildcards with accounts and
		// regions of every partition: whatever the kubelet sends us, Parse
		// must accept, or the plugin would be invoked for a host it refuses.
		regions := []string{"us-east-1", "us-west-2", "us-gov-west-1", "cn-north-1", "cn-northwest-1", "eusc-de-east-1",
			"us-iso-east-1", "us-iso-west-1", "us-isob-east-1", "eu-isoe-west-1", "us-isof-south-1", "us-isof-east-1"}
		for _, glob := range MatchImages() {
			matched := 0
			for _, region := range regions {
				host := strings.Replace(strings.Replace(glob, "*", "123456789012", 1), "*", region, 1)
				if !kubeletMatches(t, glob, host) {
					continue
				}
				if _, ok := Parse(host); ok {
					matched++
				}
			}
			require.NotZero(t, matched, "no candidate host for glob %q parses", glob)
		}
	})

	t.Run("When a look-alike is given to the kubelet, it should match no glob unless Parse would accept it", func(t *testing.T) {
		globs := MatchImages()
		for _, tc := range lookAlikes {
			if !anyKubeletMatch(t, globs, tc.input) {
				continue
			}
			// The kubelet's globs are looser than Parse (a '*' is any label),
			// so it may call the plugin; Parse is the gate that refuses.
			_, ok := Parse(tc.input)
			require.False(t, ok, "%q", tc.input)
		}
	})

	t.Run("When compared with the stock OpenShift list, it should cover the forms the stock list misses", func(t *testing.T) {
		ours := MatchImages()
		var missedByStock []string
		for _, f := range forms {
			require.True(t, anyKubeletMatch(t, ours, f.example+"/team/app:latest"), f.example)
			if !anyKubeletMatch(t, stockOpenShiftMatchImages, f.example+"/team/app:latest") {
				missedByStock = append(missedByStock, f.name)
			}
		}
		require.Subset(t, missedByStock, []string{
			"commercial dual-stack", "commercial dual-stack FIPS", "China dual-stack",
			"EU sovereign cloud", "ISO-E", "ISO-F", "ECR Public",
		})
		for _, image := range []string{
			"123456789012.dkr.ecr.us-iso-west-1.c2s.ic.gov/team/app:latest",
			"123456789012.dkr.ecr.us-isob-west-1.sc2s.sgov.gov/team/app:latest",
		} {
			require.False(t, anyKubeletMatch(t, stockOpenShiftMatchImages, image), image)
			require.True(t, anyKubeletMatch(t, ours, image), image)
		}
	})
}
