package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	"github.com/kubectl-rv/kubectl-rv/pkg/version"
)

// Factory builds clients from kubectl's global flags. Commands hold it, and
// through it the RESTClientGetter interface, never concrete clientsets.
type Factory struct {
	genericclioptions.RESTClientGetter
	configFlags *genericclioptions.ConfigFlags
	// warnings holds back the server's warnings about types the user did
	// not name, for the clients RESTConfig builds.
	warnings *warningFilter
}

// NewFactory returns a factory over kubectl's global flags.
func NewFactory(flags *genericclioptions.ConfigFlags) *Factory {
	return &Factory{RESTClientGetter: flags, configFlags: flags, warnings: &warningFilter{}}
}

// RESTConfig returns the client configuration. qps and burst override the
// client-side rate limit when positive (kubectl's defaults are 5 and 10,
// far too low for a scan of a large cluster).
func (f *Factory) RESTConfig(qps float32, burst int) (*rest.Config, error) {
	if err := f.checkKubeconfig(); err != nil {
		return nil, err
	}
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
	cfg.UserAgent = UserAgent()
	cfg.Wrap(f.warnings.wrap)
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
	if err := f.checkKubeconfig(); err != nil {
		return nil, err
	}
	d, err := f.ToDiscoveryClient()
	if err != nil {
		return nil, configError(err)
	}
	return d, nil
}

// Mapper returns the REST mapper.
func (f *Factory) Mapper() (meta.RESTMapper, error) {
	if err := f.checkKubeconfig(); err != nil {
		return nil, err
	}
	m, err := f.ToRESTMapper()
	if err != nil {
		return nil, configError(err)
	}
	return m, nil
}

// Namespace returns the namespace from -n or the kubeconfig context, and
// whether -n was given explicitly.
func (f *Factory) Namespace() (string, bool, error) {
	if err := f.checkExplicitKubeconfig(); err != nil {
		return "", false, err
	}
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
		return exitcode.Usage(fmt.Errorf("no cluster configured: set --kubeconfig or KUBECONFIG, or use --server: %w", err))
	}
	if clientcmd.IsConfigurationInvalid(err) {
		return exitcode.Usage(fmt.Errorf("invalid kubeconfig: %w", err))
	}
	return err
}

// checkKubeconfig fails, as bad input, when the kubeconfig the user named
// does not exist or when no kubeconfig names a cluster and nothing else
// does (--server, in-cluster). client-go would silently fall back to
// http://localhost:8080 and report a refused connection to a server the
// user never named; kubectl does, and its "did you specify the right host
// or port?" leaves the user to guess that KUBECONFIG is wrong.
func (f *Factory) checkKubeconfig() error {
	cf := f.configFlags
	if cf == nil {
		return nil
	}
	if deref(cf.KubeConfig) != "" {
		return f.checkExplicitKubeconfig()
	}
	if deref(cf.APIServer) != "" || os.Getenv("KUBERNETES_MASTER") != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return nil
	}
	raw, err := cf.ToRawKubeConfigLoader().RawConfig()
	if err != nil || len(raw.Clusters) > 0 {
		// A kubeconfig that does not load is reported by the load itself.
		return nil
	}
	env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar)
	if env == "" {
		return exitcode.Usagef("no kubeconfig: %s does not exist and KUBECONFIG is not set: use --kubeconfig FILE, KUBECONFIG or --server", clientcmd.RecommendedHomeFile)
	}
	why := "names no cluster"
	if !anyExists(filepath.SplitList(env)) {
		why = "no such file"
	}
	return exitcode.Usagef("KUBECONFIG=%s: %s: point KUBECONFIG at your kubeconfig, unset it to use %s, or use --kubeconfig FILE or --server", text.Escape(env), why, clientcmd.RecommendedHomeFile)
}

// checkExplicitKubeconfig fails, as bad input, when --kubeconfig names a
// file that cannot be read: a local path is never the cluster's fault.
func (f *Factory) checkExplicitKubeconfig() error {
	if f.configFlags == nil {
		return nil
	}
	if p := deref(f.configFlags.KubeConfig); p != "" {
		if _, err := os.Stat(p); err != nil {
			return exitcode.Usagef("--kubeconfig %s: %s", text.Escape(p), statReason(err))
		}
	}
	return nil
}

// nearTypes returns the served types near typ, for an unknown type's
// message: nothing when discovery fails (the message then does without).
func (f *Factory) nearTypes(typ string) []string {
	d, err := f.Discovery()
	if err != nil {
		return nil
	}
	// A partial answer (an aggregated API down) still has names to offer.
	lists, _ := d.ServerPreferredResources()
	return nearTypes(typ, lists)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func statReason(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "no such file"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func anyExists(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// decorate names the server in errors that say the cluster could not be
// reached or refused, in the documented form "cluster at https://...: ...",
// so the user sees which cluster failed.
func (f *Factory) decorate(err error) error {
	var unknown *unknownTypeError
	if errors.As(err, &unknown) && unknown.near == nil {
		unknown.near = f.nearTypes(unknown.typ)
		return err
	}
	var service *audit.ServiceError
	if err == nil || exitcode.Classify(err) != exitcode.CodeCluster || strings.HasPrefix(err.Error(), "cluster at ") || errors.As(err, &service) {
		return err
	}
	server := f.Server()
	if server == "" {
		return err
	}
	return exitcode.Cluster(fmt.Errorf("cluster at %s: %w", text.Escape(server), err))
}

// annotationNoKubeconfig marks a command (and its subcommands) that never
// talks to the cluster the kubeconfig names, such as the offline simulator:
// its errors must not be blamed on that cluster.
const AnnotationNoKubeconfig = "kubectl-rv.dev/no-kubeconfig"

// userAgent is kubectl-rv's User-Agent, with its version.
func UserAgent() string {
	return "kubectl-rv/" + version.Get().Version
}

// WarnOnlyFor holds back the server's warnings about types other than
// named for the clients RESTConfig builds, to be summed up once the
// command is done (SetUpRoot), with the advice to name a type: for
// commands that take TYPE arguments.
func (f *Factory) WarnOnlyFor(named []schema.GroupResource) { f.warnings.onlyFor(named, false) }

// DropWarningsOutside drops the server's warnings about types other than
// named, for a command that takes no TYPE arguments and lists other types
// for its own reasons: the user could do nothing about them.
func (f *Factory) DropWarningsOutside(named []schema.GroupResource) { f.warnings.onlyFor(named, true) }
