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

"""Unit tests of a lock service's several servers, without a server: the
etcd members a coordination URL names, the failover of a call from one
member to the next, and ZooKeeper's records retried by kazoo."""

from unittest import mock

from etcd3gw import exceptions as etcd3gw_exceptions
import requests

from murano_cidr.engine.drivers.lock import etcd_service
from murano_cidr.engine.drivers.lock import tooz_backend
from murano_cidr.engine.drivers.lock import zookeeper_service
from murano_cidr import exceptions
from murano_cidr.operator.drivers.lock import status_checks
from murano_cidr.tests import base

URL = "etcd3+http://h1:2379,h2:2380,h3?api_version=v3"


def _refused(client):
    raise etcd3gw_exceptions.ConnectionFailedError("Connection refused")


class TestMembers(base.TestCase):

    def test_every_member_in_order(self):
        self.assertEqual([("h1", 2379), ("h2", 2380), ("h3", 2379)],
                         etcd_service.members(URL))
        self.assertEqual([("::1", 2379), ("h", 1)], etcd_service.members(
            "etcd3+https://user@[::1]:2379,h:1"))

    def test_one_member_as_before(self):
        self.assertEqual([("h", 2379)],
                         etcd_service.members("etcd3+http://h:2379"))
        self.assertEqual([("localhost", 2379)],
                         etcd_service.members("etcd3://"))

    def test_a_bad_member_is_invalid_config(self):
        for url, member in (("etcd3+http://h1:2379,,h3:2379", "''"),
                            ("etcd3+http://h1:2379,:2379", "':2379'"),
                            ("etcd3+http://h1:x", "'h1:x'"),
                            ("etcd3+http://h1:2379,h2:70000", "'h2:70000'")):
            e = self.assertRaises(exceptions.InvalidConfig,
                                  etcd_service.members, url)
            self.assertIn("coordination_url", str(e))
            self.assertIn("%s is not an etcd member" % member, str(e))

    def test_the_url_s_timeout_wins(self):
        self.assertEqual(1.5, etcd_service.Members(
            "etcd3+http://h?timeout=1.5", 7).seconds)
        self.assertEqual(7, etcd_service.Members("etcd3+http://h", 7).seconds)
        for bad in ("x", "0", "-1", "nan"):
            e = self.assertRaises(exceptions.InvalidConfig,
                                  etcd_service.Members,
                                  "etcd3+http://h?timeout=%s" % bad, 7)
            self.assertIn("timeout=%s is not a number" % bad, str(e))

    def test_the_driver_refuses_a_bad_member_before_any_call(self):
        self.assertRaises(exceptions.InvalidConfig,
                          tooz_backend.ToozLockBackend,
                          "etcd3+http://h1:2379,h2:nope", 7, 7)


class TestFailover(base.TestCase):

    def setUp(self):
        super().setUp()
        self.members = etcd_service.Members(URL, 3)
        self.asked = []

    def answer(self, *failures):
        """A call each member fails with its failure, None: answers."""
        def call(client):
            index = self.members._clients.index(client)
            self.asked.append(index)
            failure = failures[index]
            if failure is None:
                return "answer of %d" % index
            return failure(client)
        return call

    def test_one_client_per_member(self):
        # NOTE: etcd3gw before 2.3 (2023.2's 2.1.0) has no base_url, and
        # keeps the timeout on its requests session.
        self.assertEqual([("http", "h1", 2379), ("http", "h2", 2380),
                          ("http", "h3", 2379)],
                         [(c.protocol, c.host, c.port)
                          for c in self.members._clients])
        self.assertEqual([3, 3, 3],
                         [getattr(c, "timeout", None) or c.session.timeout
                          for c in self.members._clients])

    def test_every_request_carries_the_timeout(self):
        sent = []

        def send(adapter, request, **kwargs):
            sent.append((request.url.split("/")[2], kwargs.get("timeout")))
            raise requests.exceptions.ConnectionError("refused")

        with mock.patch.object(requests.adapters.HTTPAdapter, "send",
                               autospec=True, side_effect=send):
            self.assertRaises(etcd3gw_exceptions.ConnectionFailedError,
                              self.members.call, lambda c: c.get("k"))
        self.assertEqual([("h1:2379", 3), ("h2:2380", 3)], sent)

    def test_a_lost_member_hands_the_call_to_the_next(self):
        self.assertEqual("answer of 1", self.members.call(
            self.answer(_refused, None, None)))
        self.assertEqual([0, 1], self.asked)
        # The member that failed is asked last from then on.
        self.assertEqual([1, 2, 0], self.members.order())
        self.members.call(self.answer(None, None, None))
        self.assertEqual([0, 1, 1], self.asked)

    def test_the_order_wraps_around(self):
        self.members.call(self.answer(None, _refused, None))
        self.members.call(self.answer(None, _refused, None))
        self.assertEqual([0, 0], self.asked)
        self.members.call(self.answer(_refused, None, _refused))
        self.assertEqual([0, 0, 0, 1], self.asked)
        self.assertEqual("answer of 2", self.members.call(
            self.answer(None, _refused, None)))
        self.assertEqual([0, 0, 0, 1, 1, 2], self.asked)
        self.assertEqual([2, 0, 1], self.members.order())

    def test_an_answer_with_an_error_is_not_handed_on(self):
        def error(client):
            raise etcd3gw_exceptions.PreconditionFailedError("no")

        self.assertRaises(etcd3gw_exceptions.PreconditionFailedError,
                          self.members.call, self.answer(error, None, None))
        self.assertEqual([0], self.asked)

    def test_a_call_waits_for_two_members_at_most(self):
        def timed_out(client):
            raise etcd3gw_exceptions.ConnectionTimeoutError("timed out")

        e = self.assertRaises(etcd3gw_exceptions.ConnectionFailedError,
                              self.members.call,
                              self.answer(timed_out, _refused, None))
        self.assertEqual([0, 1], self.asked)
        self.assertEqual("no etcd member answered: h1:2379: "
                         "ConnectionTimeoutError: timed out; h2:2380: "
                         "ConnectionFailedError: Connection refused",
                         e.detail_text)
        # The next call starts with the third.
        self.assertEqual("answer of 2", self.members.call(
            self.answer(timed_out, _refused, None)))


class TestEtcdRecords(base.TestCase):

    def setUp(self):
        super().setUp()
        self.records = etcd_service.EtcdRecords(
            "etcd3+http://h1:2379,h2:2379", 3,
            lambda what, function, seconds=None: function())
        self.clients = [mock.Mock(), mock.Mock()]
        self.records._members._clients = self.clients

    def test_a_create_cut_off_by_a_lost_member_is_found_written(self):
        # The first member applied the create, then died before it
        # answered; the second finds the key holding this record.
        self.clients[0].lease.side_effect = _refused
        self.clients[1].create.return_value = False
        self.clients[1].get.return_value = ["the record"]
        self.assertTrue(self.records.create("k", b"the record", None, 60))
        self.clients[1].get.return_value = ["another record"]
        self.assertFalse(self.records.create("k", b"the record", None, 60))
        self.clients[1].get.return_value = []
        self.assertFalse(self.records.create("k", b"the record", None, 60))

    def test_reads_and_deletes_go_to_the_member_that_answers(self):
        self.clients[0].get.side_effect = _refused
        self.clients[1].get.return_value = ["data"]
        self.assertEqual((b"data", b"data"), self.records.read("k"))
        self.clients[1].transaction.return_value = {"succeeded": True}
        self.assertTrue(self.records.delete("k", b"data"))
        self.clients[0].transaction.assert_not_called()


class TestProbe(base.TestCase):

    def test_the_status_check_asks_every_member(self):
        reason = status_checks.probe(tooz_backend.ToozLockBackend(
            "etcd3+http://127.0.0.1:1,127.0.0.1:2", 4, 4), 1)
        self.assertIn("cannot connect to 127.0.0.1:1", reason)
        self.assertIn("cannot connect to 127.0.0.1:2", reason)


class TestZooKeeperRecords(base.TestCase):
    """The ZooKeeper store retries through kazoo and finds its own write."""

    def setUp(self):
        super().setUp()
        self.records = zookeeper_service.ZooKeeperRecords(
            "zookeeper://h1:2181,h2:2181", {}, lambda what, function,
            seconds=None: function(), 6)
        self.client = mock.Mock(connected=True)
        self.client.retry.side_effect = lambda function, *args: function(
            *args)
        self.records._client = self.client

    def test_a_write_applied_before_the_connection_was_lost_is_found(self):
        from kazoo import exceptions as kazoo_exceptions
        self.client.create.side_effect = kazoo_exceptions.NodeExistsError
        self.client.get.return_value = (b"the record", mock.Mock())
        self.assertTrue(self.records.create("k", b"the record", None, 60))
        self.client.get.return_value = (b"another record", mock.Mock())
        self.assertFalse(self.records.create("k", b"the record", None, 60))
        # Every request goes through kazoo's retry.
        self.assertEqual(2, self.client.retry.call_count)

    def retry_once(self, function, *args):
        """kazoo's retry: the request again after one lost connection."""
        from kazoo import exceptions as kazoo_exceptions
        try:
            return function(*args)
        except kazoo_exceptions.ConnectionLoss:
            return function(*args)

    def test_a_delete_applied_before_the_connection_was_lost_is_done(self):
        # The server applied the delete, then went away before answering:
        # the retry finds no record, which the delete removed.
        from kazoo import exceptions as kazoo_exceptions
        self.client.retry.side_effect = self.retry_once
        self.client.get.side_effect = [
            (b"the record", mock.Mock(version=3)),
            kazoo_exceptions.NoNodeError]
        self.client.delete.side_effect = kazoo_exceptions.ConnectionLoss
        self.assertTrue(self.records.delete("k", b"the record"))
        self.client.delete.assert_called_once_with(
            zookeeper_service.ZooKeeperRecords.ROOT + "/k", version=3)

    def test_a_record_gone_before_the_delete_is_not_done(self):
        from kazoo import exceptions as kazoo_exceptions
        self.client.get.side_effect = kazoo_exceptions.NoNodeError
        self.assertFalse(self.records.delete("k", b"the record"))
        self.client.delete.assert_not_called()
