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

"""The MuranoPL change, made to a core-library-shaped tree of our own.

The tree is built here from text written for these tests (not Murano's):
a ``manifest.yaml`` of ``io.murano`` naming the class's file, and a
``NeutronNetwork`` whose ``deploy`` allocates in a nested ``If`` and pushes
the stack afterwards, the shape of the core library from Train to 2023.2
(one ``NeutronNetwork.yaml`` on all of them).
"""

import io
import os
import re
import subprocess
from unittest import mock

import fixtures
import yaml

from murano_cidr.engine.integration import plugin
from murano_cidr.operator.cmd import manage
from murano_cidr.operator import errors
from murano_cidr.operator import muranopl_patch
from murano_cidr.tests import base

MANIFEST = """\
Format: 1.4
Type: Library
FullName: io.murano
Classes:
  io.murano.Object: Object.yaml
  io.murano.resources.NeutronNetwork: resources/NeutronNetwork.yaml
"""

#: A network class written for these tests, in the core library's shape.
NETWORK = """\
Namespaces:
  =: io.murano.resources

Name: NeutronNetwork

Methods:
  deploy:
    Body:
      - If: not $.getAttr(done, false)
        Then:
          - $explorer: $._getNetExplorer()
          - If: not bool($.subnetCidr)
            Then:
              - $.subnetCidr: $explorer.getAvailableCidr($.routerId, id($))
          - $.getRegion().stack.push()
          - $.setAttr(done, true)

  describe:
    Body:
      - Return: $.subnetCidr
"""

#: What the command adds to it, exactly.
EXPECTED = NETWORK.replace("""\
              - $.subnetCidr: $explorer.getAvailableCidr($.routerId, id($))
""", """\
              - $.subnetCidr: $explorer.getAvailableCidr($.routerId, id($))
              # murano-cidr: this network allocated its CIDR
              - $.setAttr(cidrAllocated, true)
""").replace("""\
          - $.getRegion().stack.push()
          - $.setAttr(done, true)
""", """\
          - $.getRegion().stack.push()
          # murano-cidr: the subnet exists now
          - If: $.getAttr(cidrAllocated, false) and typeinfo($._getNetExplorer()).methods.any($.name = confirmCidr)
            Then:
              - $._getNetExplorer().confirmCidr(id($))
          - $.setAttr(done, true)

  .destroy:
    Body:
      # murano-cidr: the network is deleted: its CIDR may be reused
      - If: typeinfo($._getNetExplorer()).methods.any($.name = releaseCidr)
        Then:
          - $._getNetExplorer().releaseCidr(id($))
""")  # noqa: E501

#: What murano-cidr 1.x added: the same calls, unguarded.
UNGUARDED = EXPECTED.replace(
    " and typeinfo($._getNetExplorer()).methods.any($.name = confirmCidr)",
    "").replace("""\
      - If: typeinfo($._getNetExplorer()).methods.any($.name = releaseCidr)
        Then:
          - $._getNetExplorer().releaseCidr(id($))
""", """\
      - $._getNetExplorer().releaseCidr(id($))
""")


def make_tree(root, network=NETWORK, manifest=MANIFEST):
    """Write a core library package under ``root``; return its directory."""
    package = os.path.join(root, "meta", "io.murano")
    os.makedirs(os.path.join(package, "Classes", "resources"))
    for name, text in (("manifest.yaml", manifest),
                       ("Classes/resources/NeutronNetwork.yaml", network)):
        if text is not None:
            with open(os.path.join(package, name), "w", newline="") as f:
                f.write(text)
    return package


class CoreLibraryTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.root = self.useFixture(fixtures.TempDir()).path
        self.package = self.make_tree(self.root)
        self.network = os.path.join(self.package, "Classes", "resources",
                                    "NeutronNetwork.yaml")

    def make_tree(self, root, network=NETWORK, manifest=MANIFEST):
        return make_tree(root, network, manifest)

    def read(self, path=None):
        with open(path or self.network, newline="") as f:
            return f.read()

    def write(self, text, path=None):
        with open(path or self.network, "w", newline="") as f:
            f.write(text)


class TestChange(CoreLibraryTestCase):

    def test_adds_flag_confirm_and_destroy(self):
        result = muranopl_patch.change(self.package)
        self.assertEqual(["flag", "confirm", "destroy"], result.added)
        self.assertEqual(EXPECTED, self.read())
        methods = yaml.safe_load(self.read())["Methods"]
        self.assertEqual({"Body": [{
            "If": "typeinfo($._getNetExplorer()).methods.any("
                  "$.name = releaseCidr)",
            "Then": ["$._getNetExplorer().releaseCidr(id($))"]}]},
            methods[".destroy"])
        self.assertEqual(["deploy", ".destroy", "describe"], list(methods))

    def test_calls_what_the_plugin_adds(self):
        # Murano's DSL names a Python method confirm_cidr confirmCidr.
        after = muranopl_patch.change(self.package, dry_run=True).after
        calls = re.findall(r"_getNetExplorer\(\)\.(\w+)\(id\(\$\)\)", after)
        self.assertEqual(["confirmCidr", "releaseCidr"], calls)
        self.assertEqual(sorted(plugin.ADDED), sorted(
            re.sub("([A-Z])", lambda m: "_" + m.group(1).lower(), call)
            for call in calls))

    def test_only_adds_lines(self):
        diff = muranopl_patch.change(self.package).diff()
        self.assertTrue(diff.startswith(
            "--- a/Classes/resources/NeutronNetwork.yaml\n"
            "+++ b/Classes/resources/NeutronNetwork.yaml\n"), diff)
        removed = [line for line in diff.splitlines()[2:]
                   if line.startswith("-")]
        self.assertEqual([], removed)

    def test_printed_diff_applies_to_a_pristine_tree(self):
        diff = muranopl_patch.change(self.package).diff()
        other = self.make_tree(os.path.join(self.root, "other"))
        subprocess.run(["patch", "-s", "-p1", "-d", other], input=diff,
                       text=True, check=True)
        self.assertEqual(self.read(), self.read(os.path.join(
            other, "Classes", "resources", "NeutronNetwork.yaml")))

    def test_second_run_changes_nothing(self):
        muranopl_patch.change(self.package)
        changed = self.read()
        result = muranopl_patch.change(self.package)
        self.assertEqual([], result.added)
        self.assertEqual("", result.diff())
        self.assertEqual(changed, self.read())

    def test_dry_run_writes_nothing(self):
        result = muranopl_patch.change(self.package, dry_run=True)
        self.assertEqual(NETWORK, self.read())
        self.assertEqual(EXPECTED, result.after)

    def test_package_directory_or_source_tree(self):
        self.assertEqual(self.network,
                         muranopl_patch.change(self.root, dry_run=True).path)
        self.assertEqual(self.network, muranopl_patch.change(
            self.package, dry_run=True).path)

    def test_a_guarded_change_made_by_hand_is_recognised(self):
        by_hand = EXPECTED.replace("              - $._getNetExplorer()."
                                   "confirmCidr", "              - "
                                   "$explorer.confirmCidr")
        self.write(by_hand)
        self.assertEqual([], muranopl_patch.change(self.package).added)
        self.assertEqual(by_hand, self.read())

    def test_an_unguarded_call_made_by_hand_is_refused(self):
        # An earlier hand-applied form: the local explorer variable, and
        # no guard, so a rollback would fail every deployment.
        by_hand = UNGUARDED.replace("$._getNetExplorer().confirmCidr",
                                    "$explorer.confirmCidr")
        self.write(by_hand)
        e = self.assertRaises(errors.UnexpectedCoreLibrary,
                              muranopl_patch.change, self.package)
        self.assertIn("calls confirmCidr and releaseCidr without checking "
                      "that the explorer has it", str(e))
        self.assertEqual(by_hand, self.read())

    def test_the_unguarded_change_of_1_x_is_replaced_by_the_guarded(self):
        self.write(UNGUARDED)
        result = muranopl_patch.change(self.package)
        self.assertEqual(["flag", "confirm", "destroy"], result.added)
        self.assertEqual(EXPECTED, self.read())
        self.assertEqual([], muranopl_patch.change(self.package).added)

    def test_missing_parts_only(self):
        self.write(NETWORK + """
  .destroy:
    Body:
      - If: typeinfo($._getNetExplorer()).methods.any($.name = releaseCidr)
        Then:
          - $._getNetExplorer().releaseCidr(id($))
""")
        result = muranopl_patch.change(self.package)
        self.assertEqual(["flag", "confirm"], result.added)
        self.assertEqual([], muranopl_patch.change(self.package).added)

    def test_windows_line_ends_are_kept(self):
        self.write(NETWORK.replace("\n", "\r\n"))
        muranopl_patch.change(self.package)
        self.assertEqual(EXPECTED.replace("\n", "\r\n"), self.read())


class TestRevert(CoreLibraryTestCase):
    """``--revert``: the class byte for byte as it was before the change."""

    def assertRoundTrip(self, original):
        self.write(original)
        muranopl_patch.change(self.package)
        self.assertNotEqual(original, self.read())
        result = muranopl_patch.revert(self.package)
        self.assertEqual(["flag", "confirm", "destroy"], result.added)
        self.assertEqual(original, self.read())
        self.assertEqual(original.encode(), open(self.network, "rb").read())

    def test_restores_the_original_exactly(self):
        self.assertRoundTrip(NETWORK)

    def test_windows_line_ends(self):
        self.assertRoundTrip(NETWORK.replace("\n", "\r\n"))

    def test_a_file_without_a_last_line_end(self):
        # deploy is the last method: .destroy goes at the end of the file.
        self.assertRoundTrip(NETWORK[:NETWORK.index("\n  describe:")]
                             .rstrip("\n"))

    def test_the_unguarded_change_of_1_x(self):
        self.write(UNGUARDED)
        self.assertEqual(["flag", "confirm", "destroy"],
                         muranopl_patch.revert(self.package).added)
        self.assertEqual(NETWORK, self.read())

    def test_an_unchanged_class_is_left_alone(self):
        self.assertEqual([], muranopl_patch.revert(self.package).added)
        self.assertEqual(NETWORK, self.read())

    def test_dry_run_writes_nothing(self):
        self.write(EXPECTED)
        result = muranopl_patch.revert(self.package, dry_run=True)
        self.assertEqual((EXPECTED, NETWORK), (self.read(), result.after))

    def test_a_change_edited_by_hand_is_refused(self):
        edited = EXPECTED.replace("# murano-cidr: the subnet exists now\n",
                                  "# our own note\n")
        self.write(edited)
        e = self.assertRaises(errors.UnexpectedCoreLibrary,
                              muranopl_patch.revert, self.package)
        self.assertIn("not as patch-core-library makes it", str(e))
        self.assertEqual(edited, self.read())


class TestRefusals(CoreLibraryTestCase):
    """A tree that is not as expected: one clear error, nothing written."""

    def assertRefused(self, fragment, path=None):
        before = self.read() if os.path.exists(self.network) else None
        e = self.assertRaises(errors.UnexpectedCoreLibrary,
                              muranopl_patch.change, path or self.package)
        self.assertIn(fragment, str(e))
        self.assertIn("nothing was changed", str(e))
        if before is not None:
            self.assertEqual(before, self.read())
        return e

    def test_no_manifest(self):
        self.assertRefused("no manifest.yaml", path=os.path.join(
            self.root, "meta"))

    def test_another_package(self):
        self.write(MANIFEST.replace("FullName: io.murano",
                                    "FullName: org.example.App"),
                   os.path.join(self.package, "manifest.yaml"))
        self.assertRefused("manifest of org.example.App, not of the core "
                           "library io.murano")

    def test_manifest_without_the_class(self):
        self.write(MANIFEST.replace("io.murano.resources.NeutronNetwork",
                                    "io.murano.resources.Other"),
                   os.path.join(self.package, "manifest.yaml"))
        self.assertRefused("names no file for the class "
                           "io.murano.resources.NeutronNetwork")

    def test_manifest_not_yaml(self):
        self.write("Classes: [\n", os.path.join(self.package,
                                                "manifest.yaml"))
        self.assertRefused("is not YAML")

    def test_class_file_missing(self):
        os.unlink(self.network)
        self.assertRefused("cannot be read")

    def test_class_file_not_yaml(self):
        self.write(NETWORK + "  - [unclosed\n")
        self.assertRefused("is not YAML")

    def test_another_class(self):
        self.write(NETWORK.replace("Name: NeutronNetwork", "Name: Other"))
        self.assertRefused("does not define the class NeutronNetwork")

    def test_no_deploy(self):
        self.write(NETWORK.replace("  deploy:", "  deployLater:"))
        self.assertRefused("has no block mapping Methods with deploy")

    def test_no_allocation(self):
        self.write(NETWORK.replace("getAvailableCidr", "pickSomething"))
        self.assertRefused("deploy has 0 steps that set $.subnetCidr")

    def test_two_allocations(self):
        step = ("              - $.subnetCidr: "
                "$explorer.getAvailableCidr($.routerId, id($))\n")
        self.write(NETWORK.replace(step, step + step))
        self.assertRefused("deploy has 2 steps that set $.subnetCidr")

    def test_no_push_after_the_allocation(self):
        self.write(NETWORK.replace("stack.push()", "stack.output()"))
        self.assertRefused("deploy has 0 stack pushes after its allocation")

    def test_flow_style_steps(self):
        self.write(NETWORK.replace(
            "          - $.getRegion().stack.push()\n"
            "          - $.setAttr(done, true)\n",
            "          - [$.getRegion().stack.push()]\n"))
        self.assertRefused("deploy's steps are in flow style")

    def test_a_destroy_of_its_own(self):
        self.write(NETWORK + """
  .destroy:
    Body:
      - $.getRegion().stack.delete()
""")
        self.assertRefused("has a .destroy of its own")


class TestCommand(CoreLibraryTestCase):

    def run_command(self, *args, config_file=None):
        out, err = io.StringIO(), io.StringIO()
        head = ["--config-file", config_file] if config_file else []
        with mock.patch("sys.stdout", out), mock.patch("sys.stderr", err):
            code = manage.main(head + ["murano", "patch-core-library"]
                               + list(args))
        return code, out.getvalue(), err.getvalue()

    def test_prints_the_diff_and_the_reimport(self):
        diff = muranopl_patch.change(self.package, dry_run=True).diff()
        code, out, err = self.run_command(self.root)
        self.assertEqual((0, ""), (code, err))
        self.assertEqual(EXPECTED, self.read())
        self.assertEqual(diff, out[:len(diff)])
        last = out[len(diff):].splitlines()
        self.assertEqual(2, len(last), out)
        self.assertEqual("Changed %s: deploy records that the network "
                         "allocated its CIDR; deploy confirms the CIDR after "
                         "the stack push; a new .destroy releases it."
                         % self.network, last[0])
        self.assertIn("cd %s && zip -r /tmp/io.murano.zip . && openstack "
                      "application catalog package import --is-public "
                      "--exists-action u /tmp/io.murano.zip" % self.package,
                      last[1])
        self.assertIn("murano-manage --config-file /etc/murano/murano.conf "
                      "import-package %s --update" % self.package, last[1])

    def test_the_reimport_names_the_configuration_file_given(self):
        conf = os.path.join(self.root, "murano.conf")
        self.write("[DEFAULT]\n", conf)
        code, out, err = self.run_command(self.package, config_file=conf)
        self.assertEqual((0, ""), (code, err))
        self.assertIn("murano-manage --config-file %s import-package %s"
                      % (conf, self.package), out.splitlines()[-1])

    def test_revert_prints_the_diff_and_the_reimport(self):
        self.run_command(self.package)
        code, out, err = self.run_command("--revert", self.package)
        self.assertEqual((0, ""), (code, err))
        self.assertEqual(NETWORK, self.read())
        self.assertIn("-          # murano-cidr: the subnet exists now\n", out)
        self.assertEqual("Removed murano-cidr's change from %s: it is again "
                         "as it was before the change." % self.network,
                         out.splitlines()[-2])
        self.assertIn("--exists-action u", out.splitlines()[-1])
        code, out, err = self.run_command("--revert", self.package)
        self.assertEqual("%s does not have murano-cidr's MuranoPL change: "
                         "nothing to do.\n" % self.network, out)

    def test_dry_run_prints_and_writes_nothing(self):
        code, out, err = self.run_command("--dry-run", self.package)
        self.assertEqual(0, code)
        self.assertEqual(NETWORK, self.read())
        self.assertIn("+          - $._getNetExplorer().releaseCidr(id($))\n",
                      out)
        self.assertIn("Dry run: %s was not changed" % self.network,
                      out.splitlines()[-1])

    def test_second_run_says_so(self):
        self.run_command(self.package)
        code, out, err = self.run_command(self.package)
        self.assertEqual(0, code)
        self.assertEqual("%s already has murano-cidr's MuranoPL change: "
                         "nothing to do.\n" % self.network, out)

    def test_refusal_is_one_line_and_exit_2(self):
        self.write(NETWORK.replace("Name: NeutronNetwork", "Name: Other"))
        code, out, err = self.run_command(self.package)
        self.assertEqual((2, ""), (code, out))
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertTrue(err.startswith("murano-cidr-manage: error: "), err)
        self.assertIn("does not define the class NeutronNetwork", err)
