package cmd

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// Factory builds clients from kubectl's global flags. Commands hold it, and
// through it the RESTClientGetter interface, never concrete clientsets.
type Factory struct {
	genericclioptions.RESTClientGetter
	configFlags *genericclioptions.ConfigFlags
}

// NewFactory returns a factory over kubectl's global flags.
func NewFactory(flags *genericclioptions.ConfigFlags) *Factory {
	return &Factory{RESTClientGetter: flags, configFlags: flags}
}

// RESTConfig returns the client configuration. qps and burst override the
// client-side rate limit when positive (kubectl's defaults are 5 and 10,
// far too low for a scan of a large cluster).
func (f *Factory) RESTConfig(qps float32, burst int) (*rest.Config, error) {
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return nil, configError(err)
	}
	cfg = rest.CopyConfig(cfg)
	if qps > 0 {
		cfg.QPS = qps
	}
	if burst > 0 {
		cfg.Burst = burst
	}
	cfg.UserAgent = userAgent()
	return cfg, nil
}

// Dynamic returns a dynamic client with the given rate limit (see RESTConfig).
func (f *Factory) Dynamic(qps float32, burst int) (dynamic.Interface, error) {
	cfg, err := f.RESTConfig(qps, burst)
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(cfg)
}

// Discovery returns a cached discovery client.
func (f *Factory) Discovery() (discovery.CachedDiscoveryInterface, error) {
	d, err := f.ToDiscoveryClient()
	if err != nil {
		return nil, configError(err)
	}
	return d, nil
}

// Mapper returns the REST mapper.
func (f *Factory) Mapper() (meta.RESTMapper, error) {
	m, err := f.ToRESTMapper()
	if err != nil {
		return nil, configError(err)
	}
	return m, nil
}

// Namespace returns the namespace from -n or the kubeconfig context, and
// whether -n was given explicitly.
func (f *Factory) Namespace() (string, bool, error) {
	ns, explicit, err := f.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", false, configError(err)
	}
	return ns, explicit, nil
}

// Server names the API server the flags point at, for messages.
func (f *Factory) Server() string {
	cfg, err := f.ToRESTConfig()
	if err != nil || cfg.Host == "" {
		return ""
	}
	return cfg.Host
}

func configError(err error) error {
	if clientcmd.IsEmptyConfig(err) {
		return exitcode.Cluster(fmt.Errorf("no cluster configured: set --kubeconfig or KUBECONFIG, or use --server: %w", err))
	}
	if clientcmd.IsConfigurationInvalid(err) {
		return exitcode.Usage(fmt.Errorf("invalid kubeconfig: %w", err))
	}
	return err
}

// decorate names the server in errors that say the cluster could not be
// reached, so the user sees which cluster failed.
func (f *Factory) decorate(err error) error {
	if err == nil || exitcode.Classify(err) != exitcode.CodeCluster {
		return err
	}
	server := f.Server()
	if server == "" || strings.Contains(err.Error(), strings.TrimPrefix(strings.TrimPrefix(server, "https://"), "http://")) {
		return err
	}
	return exitcode.Cluster(fmt.Errorf("cluster at %s: %w", server, err))
}
