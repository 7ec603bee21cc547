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

import io
import os

import fixtures
from oslo_config import cfg
from oslo_config import generator
import testtools

import murano_cidr
from murano_cidr.operator.drivers import commands
from murano_cidr import opts

REPO = os.path.dirname(os.path.dirname(os.path.abspath(murano_cidr.__file__)))
GENERATOR_CONF = os.path.join(REPO, "etc", "murano-cidr",
                              "murano-cidr-config-generator.conf")
SAMPLE = os.path.join(REPO, "etc", "murano-cidr", "murano-cidr.conf.sample")


class TestSampleConfig(testtools.TestCase):

    def test_committed_sample_is_current(self):
        conf = cfg.ConfigOpts()
        generator.register_cli_opts(conf)
        conf(["--config-file", GENERATOR_CONF], default_config_files=[])
        out = io.StringIO()
        generator.generate(conf, output_file=out)
        with open(SAMPLE) as f:
            committed = f.read()
        self.assertEqual(
            out.getvalue(), committed,
            "etc/murano-cidr/murano-cidr.conf.sample is stale; run "
            "'tox -e genconfig' and commit the result")


class TestOpts(testtools.TestCase):

    def test_list_opts_covers_every_registered_option(self):
        conf = cfg.ConfigOpts()
        commands.register_opts(conf)
        listed = {(group if isinstance(group, str) else group.name, o.dest)
                  for group, group_opts in commands.list_opts()
                  for o in group_opts}
        for group_name in conf.list_all_sections():
            for name in conf[group_name]:
                self.assertIn((group_name, name), listed)

    def test_register_twice_is_harmless(self):
        conf = cfg.ConfigOpts()
        commands.register_opts(conf)
        commands.register_opts(conf)
        self.assertEqual("10.0.0.0", conf.cidr_allocator.env_ip_template)

    def test_state_path_follows_xdg(self):
        self.useFixture(fixtures.EnvironmentVariable("XDG_STATE_HOME",
                                                     "/srv/state"))
        self.assertEqual("/srv/state/murano-cidr", opts.default_state_path())

    def test_state_path_expands_the_home_directory(self):
        conf = cfg.ConfigOpts()
        commands.register_opts(conf)
        conf.set_override("state_path", "~/x", group=opts.GROUP)
        self.assertEqual(os.path.join(os.path.expanduser("~"), "x"),
                         opts.state_path(conf))


class TestMuranoNetworkingFallbacks(testtools.TestCase):
    """``[networking]`` of murano.conf, read where ours are not set."""

    def conf_from(self, text, murano_registers=True):
        path = self.useFixture(fixtures.TempDir()).path + "/murano.conf"
        with open(path, "w") as f:
            f.write(text)
        conf = cfg.ConfigOpts()
        if murano_registers:
            # What Murano's engine registers itself, with its defaults.
            conf.register_opts([
                cfg.IntOpt("max_environments", default=250),
                cfg.IntOpt("max_hosts", default=250),
                cfg.StrOpt("env_ip_template", default="10.0.0.0"),
            ], group="networking")
        commands.register_opts(conf)
        conf(["--config-file", path], default_config_files=[])
        return conf

    def test_networking_values_are_read_when_ours_are_unset(self):
        conf = self.conf_from("[networking]\nmax_environments = 100\n"
                              "max_hosts = 60\n"
                              "env_ip_template = 192.168.0.0\n")
        group = conf[opts.GROUP]
        self.assertEqual((100, 60, "192.168.0.0"),
                         (group.max_environments, group.max_hosts,
                          group.env_ip_template))
        self.assertEqual(100, conf.networking.max_environments)

    def test_ours_win_over_networking(self):
        conf = self.conf_from("[networking]\nmax_environments = 100\n"
                              "[cidr_allocator]\nmax_environments = 500\n")
        self.assertEqual(500, conf[opts.GROUP].max_environments)
        self.assertEqual(250, conf[opts.GROUP].max_hosts)

    def test_read_even_where_nothing_registers_networking(self):
        conf = self.conf_from("[networking]\nmax_hosts = 60\n",
                              murano_registers=False)
        self.assertEqual(60, conf[opts.GROUP].max_hosts)
        self.assertNotIn("networking", conf)
