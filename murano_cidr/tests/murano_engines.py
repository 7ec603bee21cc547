#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

"""Stand-ins for Murano's ``NetworkExplorer``, one per branch family.

Each stand-in has the constructor, client access and method signatures of
the real class on its branches (read from Murano's code and recorded in
:data:`FAMILIES`), restated here in a few lines.

:func:`build_stock_engine` builds each family's stand-in unpatched, as
Murano ships it (its own pick), and :func:`load_package_type_plugins`
loads plugins as Murano's package-type loader does, for the engine
plugin's tests. :func:`build_engine` builds a family that the engine
plugin knows as the plugin changes it, for Murano's own test cases.

Like Murano's tests, the stand-ins find ``nclient``, ``auth_utils`` and
``helpers`` as attributes of this module, which a test patches with mocks,
and read ``CONF.networking`` from this module's ``CONF``.
"""

import dataclasses
import importlib.metadata
import inspect
import types

from oslo_config import cfg
from stevedore import dispatch
from stevedore import extension as stevedore_extension

from murano_cidr.engine.integration import plugin
from murano_cidr.tests.unit import murano_reference

#: Patched by the tests, as Murano's tests patch its engine module.
nclient = None
auth_utils = None
helpers = None
CONF = cfg.CONF

#: Murano's own ``[networking]`` options that the stand-ins read, with
#: Murano's defaults (Liberty onwards). Registered by the tests on their
#: configuration, never by the library.
NETWORKING_OPTS = [
    cfg.IntOpt("max_environments", default=250),
    cfg.IntOpt("max_hosts", default=250),
    cfg.StrOpt("env_ip_template", default="10.0.0.0"),
    cfg.StrOpt("router_name", default="murano-default-router"),
    cfg.BoolOpt("create_router", default=True),
    cfg.StrOpt("external_network", default="ext-net"),
    cfg.ListOpt("default_dns", default=[]),
]


@dataclasses.dataclass(frozen=True)
class Family(object):
    """A family of Murano branches sharing one ``NetworkExplorer``.

    :ivar name: the family's name (its first and last branch).
    :ivar branches: the stable branches it covers.
    :ivar signatures: method name to its signature on those branches.
    :ivar ip_version: whether ``get_available_cidr`` takes one.
    """

    name: str
    branches: tuple
    signatures: dict
    ip_version: bool


_COMMON = {
    "get_default_router": "(self)",
    "get_external_network_id_for_router": "(self, router_id)",
    "get_external_network_id_for_network": "(self, network_id)",
    "_get_cidrs_taken_by_router": "(self, router_id)",
    "list_networks": "(self)",
    "list_subnetworks": "(self)",
    "list_ports": "(self)",
    "confirm_cidr": "(self, net_id)",
    "release_cidr": "(self, net_id)",
}

FAMILIES = [
    Family("train-2023.2",
           ("train", "ussuri", "victoria", "wallaby", "xena", "yoga", "zed",
            "2023.1", "2023.2"),
           dict(_COMMON, __init__="(self, this, region_name=None)",
                get_available_cidr="(self, router_id, net_id, ip_version=4)",
                get_default_dns="(self, ip_version=4)",
                list_neutron_extensions="(self)"),
           ip_version=True),
    Family("newton-stein",
           ("newton", "ocata", "pike", "queens", "rocky", "stein"),
           dict(_COMMON, __init__="(self, this, region_name=None)",
                get_available_cidr="(self, router_id, net_id)",
                get_default_dns="(self)",
                list_neutron_extensions="(self)"),
           ip_version=False),
    Family("mitaka", ("mitaka",),
           dict(_COMMON, __init__="(self, this)",
                get_available_cidr="(self, router_id, net_id)",
                get_default_dns="(self)",
                list_neutron_extensions="(self)"),
           ip_version=False),
    Family("liberty", ("liberty",),
           dict(_COMMON, __init__="(self)",
                get_available_cidr="(self, router_id, net_id)",
                get_default_dns="(self)"),
           ip_version=False),
]


class _Explorer(object):
    """What every family's engine does the same way, restated."""

    def get_default_router(self):
        routers = self._neutron.list_routers(
            name=self._settings.router_name).get("routers")
        if not routers:
            raise KeyError("Router %s was not found"
                           % self._settings.router_name)
        return routers[0]["id"]

    def get_external_network_id_for_router(self, router_id):
        router = self._neutron.show_router(router_id).get("router")
        if not router or "external_gateway_info" not in router:
            return None
        return router["external_gateway_info"].get("network_id")

    def get_external_network_id_for_network(self, network_id):
        network = self._neutron.show_network(network_id).get("network")
        if network.get("router:external", False):
            return network_id
        return None

    def _get_cidrs_taken_by_router(self, router_id):
        if not router_id:
            return []
        ports = self._neutron.list_ports(device_id=router_id)["ports"]
        ids = {ip["subnet_id"] for p in ports for ip in p["fixed_ips"]}
        return [s["cidr"] for s in self._neutron.list_subnets()["subnets"]
                if s["id"] in ids]

    def list_networks(self):
        return self._neutron.list_networks()["networks"]

    def list_subnetworks(self):
        return self._neutron.list_subnets()["subnets"]

    def list_ports(self):
        return self._neutron.list_ports()["ports"]


def _remember_project(explorer):
    # The project of the deployment, and the [networking] options.
    explorer._project_id = helpers.get_execution_session().project_id
    explorer._settings = getattr(CONF, "networking")


def _neutron_client(region):
    # A Neutron client of the session, in the region given (or the default).
    kwargs = auth_utils.get_session_client_parameters(
        service_type="network", region=region, conf="neutron")
    return nclient.Client(**kwargs)


class _RegionExplorer(_Explorer):
    # Newton onwards: the client of the owning CloudRegion's region.

    def __init__(self, this, region_name=None):
        _remember_project(self)
        self._region = this.find_owner("io.murano.CloudRegion")
        self._region_name = region_name or None

    @property
    def _client(self):
        if self._region_name:
            return _neutron_client(self._region_name)
        return _neutron_client(self._region and self._region["name"])

    _neutron = _client

    def list_neutron_extensions(self):
        return self._client.list_extensions()["extensions"]


class _MitakaExplorer(_Explorer):
    # Mitaka: the client of the owning Environment's region.

    def __init__(self, this):
        _remember_project(self)
        self._owner = this.find_owner("io.murano.Environment")

    @property
    def _client(self):
        return _neutron_client(self._owner and self._owner["region"])

    _neutron = _client

    def list_neutron_extensions(self):
        return self._client.list_extensions()["extensions"]


class _LibertyExplorer(_Explorer):
    # Liberty: the environment's client factory, asked on every call.

    def __init__(self):
        env = helpers.get_environment()
        self._clients, self._tenant_id = env.clients, env.tenant_id
        self._settings = getattr(CONF, "networking")

    @property
    def _neutron(self):
        return self._clients.get_neutron_client()


_BASES = {"train-2023.2": _RegionExplorer, "newton-stein": _RegionExplorer,
          "mitaka": _MitakaExplorer, "liberty": _LibertyExplorer}


def _default_dns(self):
    return self._settings.default_dns


def _default_dns_of_version(self, ip_version=4):
    # Train onwards filters the list by version; the stand-in keeps it.
    return [ip for ip in self._settings.default_dns
            if (":" in ip) == (ip_version == 6)]


def build_engine(family):
    """Build the family's ``NetworkExplorer`` as the engine plugin changes it.

    :param family: a :class:`Family` the plugin knows
        (:data:`murano_cidr.engine.integration.plugin.KNOWN_EXPLORERS`).
    :returns: a class.
    """
    engine = build_stock_engine(family)
    # NOTE: what install() does to Murano's class once it has recognised
    # it; install() itself is tested with the stock engines.
    plugin._change(engine)
    return engine


def signature(cls, name):
    """Return a method's signature as text, ``self`` included."""
    return str(inspect.signature(getattr(cls, name)))


# -- as Murano ships them: the engine's own pick, and its plugin loader -----

#: Murano's own ``[murano]`` option that its plugin loaders read.
MURANO_OPTS = [cfg.ListOpt("enabled_plugins")]

#: The namespace of Murano's package-type plugins.
PACKAGE_TYPES = "io.murano.plugins.packages"

#: What ``entry_point.dist`` is on the entry points stevedore hands
#: Murano's loaders (their check and failure callback read it), on each
#: branch: stevedore before 3 (Ussuri's 1.32) reads them through
#: pkg_resources, whose entry points name their distribution
#: (``dist.project_name``); stevedore 3 and later (Victoria on) build
#: them with ``importlib.metadata``, without a distribution: no such
#: attribute on Python 3.8 and 3.9, None from Python 3.10 on.
DIST_NAMED = "named"
DIST_MISSING = "missing"
DIST_NONE = "none"

#: Each branch's loader, by what its entry points carry as ``dist``.
LOADERS = [
    ("ussuri", DIST_NAMED),
    ("victoria-2023.2 on python 3.8 and 3.9", DIST_MISSING),
    ("2023.1 and 2023.2 on python 3.10 and later", DIST_NONE),
]


def _dist_here():
    if hasattr(stevedore_extension, "pkg_resources"):
        return DIST_NAMED
    if hasattr(importlib.metadata.EntryPoint("name", "module:attr", "group"),
               "dist"):
        return DIST_NONE
    return DIST_MISSING


#: What the stevedore and the Python running the tests give.
DIST = _dist_here()

#: Whether those entry points name their distribution (Ussuri's).
ENTRY_POINTS_NAME_THEIR_PROJECT = DIST == DIST_NAMED

#: Whether they have a ``dist`` attribute at all.
ENTRY_POINTS_HAVE_DIST = DIST != DIST_MISSING


def entry_point_target(entry_point):
    """Return ``module:attribute`` of an entry point stevedore gives."""
    # NOTE: pkg_resources' entry points (stevedore before 3) have no value.
    return getattr(entry_point, "value", None) or "%s:%s" % (
        entry_point.module_name, ".".join(entry_point.attrs))


def _own_pick(self, router_id, net_id, ip_version):
    # Murano's hash-and-probe over its candidates (murano_reference).
    settings = self._settings
    available = murano_reference.candidates(
        settings.env_ip_template, settings.max_environments,
        settings.max_hosts)
    if ip_version == 6:
        available = [cidr.ipv6() for cidr in available]
    return murano_reference.pick(
        available, self._get_cidrs_taken_by_router(router_id), hash(net_id))


def _own_pick_of_version(self, router_id, net_id, ip_version=4):
    return _own_pick(self, router_id, net_id, ip_version)


def _own_pick_v4(self, router_id, net_id):
    return _own_pick(self, router_id, net_id, 4)


def build_stock_engine(family):
    """Build the family's ``NetworkExplorer`` as Murano ships it, unpatched.

    It picks CIDRs itself (Murano's pick, from
    :mod:`murano_cidr.tests.unit.murano_reference`) and has no
    ``confirm_cidr`` or ``release_cidr``; its other signatures are the
    family's (:attr:`Family.signatures`).

    :param family: a :class:`Family`.
    :returns: a class.
    """
    if family.ip_version:
        methods = {"get_available_cidr": _own_pick_of_version,
                   "get_default_dns": _default_dns_of_version}
    else:
        methods = {"get_available_cidr": _own_pick_v4,
                   "get_default_dns": _default_dns}
    return type("NetworkExplorer", (_BASES[family.name],), methods)


class _BranchEntryPoint(object):
    """An entry point as another branch's stevedore would hand it over."""

    def __init__(self, entry_point, dist):
        self._entry_point = entry_point
        self._dist = dist

    def __getattr__(self, name):
        if name != "dist":
            return getattr(self._entry_point, name)
        if self._dist == DIST_MISSING:
            raise AttributeError("'EntryPoint' object has no attribute "
                                 "'dist'")
        if self._dist == DIST_NONE:
            return None
        return _named_distribution(self._entry_point)


def _named_distribution(entry_point):
    # The distribution that declares the entry point, as pkg_resources
    # names it.
    target = entry_point_target(entry_point)
    for distribution in importlib.metadata.distributions():
        if any(declared.name == entry_point.name and declared.value == target
               for declared in distribution.entry_points):
            return types.SimpleNamespace(
                project_name=distribution.metadata["Name"])
    return None


class _BranchManager(dispatch.EnabledExtensionManager):
    # Murano's EnabledExtensionManager, with a branch's entry points.

    def __init__(self, dist, *args, **kwargs):
        self._dist = dist
        super().__init__(*args, **kwargs)

    def list_entry_points(self):
        found = super().list_entry_points()
        if self._dist in (None, DIST):
            return found
        return [_BranchEntryPoint(e, self._dist) for e in found]


def load_package_type_plugins(conf, dist=None):
    """Load plugins the way Murano's package-type loader does, restated.

    Murano builds it once per process, when it loads its first package
    (the engine, the API's package upload and ``murano-manage
    import-package`` alike): a stevedore ``EnabledExtensionManager`` over
    :data:`PACKAGE_TYPES`, whose check keeps every plugin while ``[murano]
    enabled_plugins`` is unset and otherwise compares
    ``entry_point.dist.project_name`` with the list; then, for each plugin
    whose name is a ``Format/version``, it calls the class's
    ``init_plugin`` if it has one.

    A check that raises (``[murano]`` not registered, as in
    ``murano-manage``; or ``enabled_plugins`` set where the entry points
    name no distribution) makes stevedore call Murano's failure callback,
    whose warning names ``entry_point.dist``. Where the entry points have
    no such attribute (:data:`DIST_MISSING`) the callback's
    ``AttributeError`` escapes the loader, and with it the command, as
    here.

    :param conf: the process's configuration, with :data:`MURANO_OPTS`
        registered in ``[murano]`` (as the engine and the API have them),
        or not (as ``murano-manage`` has it).
    :param dist: the branch's entry points (:data:`LOADERS`): the
        installed entry points, their ``dist`` as that branch's stevedore
        gives it; None: as the installed stevedore gives them.
    :returns: ``(names of the plugins initialised, [(name, error)] of those
        that failed to load)``.
    :raises AttributeError: where Murano's failure callback raises it.
    """
    failures = []

    def enabled(extension):
        plugins = conf.murano.enabled_plugins
        if plugins is None:
            return True
        return extension.entry_point.dist.project_name in plugins

    def failed(manager, entry_point, error):
        distribution = entry_point.dist
        failures.append((entry_point.name, error))
        return distribution

    manager = _BranchManager(dist, PACKAGE_TYPES, enabled,
                             on_load_failure_callback=failed)
    initialised = []
    for extension in manager.extensions:
        name, _, version = extension.entry_point.name.rpartition("/")
        if name and version and hasattr(extension.plugin, "init_plugin"):
            extension.plugin.init_plugin()
            initialised.append(extension.entry_point.name)
    return initialised, failures
