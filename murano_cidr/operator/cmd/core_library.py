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

"""``murano-cidr-manage murano patch-core-library``: the MuranoPL change.

Usage::

    murano-cidr-manage [--config-file murano.conf] murano \
        patch-core-library [--dry-run] [--revert] PATH

PATH is the directory of Murano's core library package (``io.murano``,
with its ``manifest.yaml``) or a checkout of Murano's source (its
``meta/io.murano``). The command prints the unified diff of what it changed
(or, with ``--dry-run``, would change) in ``NeutronNetwork``, then how to
re-import the package; ``--revert`` removes the change again, so that the
class is byte for byte what it was. See
:mod:`murano_cidr.operator.muranopl_patch`.
"""

from murano_cidr.operator import muranopl_patch

#: The configuration file the re-import hint names if none was given.
MURANO_CONF = "/etc/murano/murano.conf"

#: How the operator re-imports the changed package: through Murano's API.
REIMPORT = (
    "Re-import the core library so that Murano's engines use it, through "
    "Murano's API: cd %(package)s && zip -r /tmp/io.murano.zip . && "
    "openstack application catalog package import --is-public "
    "--exists-action u /tmp/io.murano.zip (not murano-manage --config-file "
    "%(conf)s import-package %(package)s --update: it cannot replace a "
    "package that exists, and fails on Python 3.8 and 3.9 with murano-cidr "
    "installed; see murano-cidr's Murano integration guide).")


def _reimport(conf, package):
    files = getattr(conf, "config_file", None) or [MURANO_CONF]
    return REIMPORT % {"package": package, "conf": files[-1]}


def do_patch_core_library(conf):
    """Make, show or revert the change; print its diff and what next."""
    revert = conf.command.revert
    act = muranopl_patch.revert if revert else muranopl_patch.change
    result = act(conf.command.path, dry_run=conf.command.dry_run)
    if not result.added:
        print("%s %s murano-cidr's MuranoPL change: nothing to do."
              % (result.path, "does not have" if revert else "already has"))
        return
    print(result.diff(), end="")
    if conf.command.dry_run:
        print("Dry run: %s was not changed; without --dry-run this diff is "
              "applied to it." % result.path)
        return
    if revert:
        print("Removed murano-cidr's change from %s: it is again as it was "
              "before the change." % result.path)
    else:
        print("Changed %s: %s." % (result.path, "; ".join(
            muranopl_patch.PARTS[part] for part in result.added)))
    print(_reimport(conf, result.package))


def add_command_parsers(subparsers):
    """Add the ``murano`` commands to ``murano-cidr-manage``.

    :param subparsers: the ``argparse`` sub-parsers of the command line.
    """
    murano = subparsers.add_parser(
        "murano", help="Murano's own files",
        description="Change what murano-cidr needs changed in Murano.")
    commands = murano.add_subparsers(title="murano commands",
                                     dest="murano_command")
    commands.required = True
    patch = commands.add_parser(
        "patch-core-library",
        help="add the release path (confirm after the stack push, release "
        "in .destroy) to the NeutronNetwork class of the io.murano core "
        "library, and print the diff",
        description="Add murano-cidr's optional MuranoPL change to the "
        "NeutronNetwork class of Murano's io.murano core library: deploy "
        "confirms the CIDR after the stack push, and a new .destroy "
        "releases it; both calls are made only if the engine plugin added "
        "them. The class is found through the package's "
        "manifest.yaml; a tree that does not look as expected is refused "
        "and left unchanged, and a change already made is not made again.")
    patch.add_argument(
        "path", metavar="PATH",
        help="the core library package's directory (with manifest.yaml), "
        "or a checkout of Murano's source (its meta/io.murano)")
    patch.add_argument("--dry-run", action="store_true",
                       help="print the diff without changing anything")
    patch.add_argument("--revert", action="store_true",
                       help="remove the change (as this command makes it, "
                       "in this or an earlier release), so that the class "
                       "is byte for byte what it was")
    patch.set_defaults(action=do_patch_core_library)
