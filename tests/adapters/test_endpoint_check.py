"""check_custom_endpoint: only public http(s) endpoints unless private ones are allowed;
names are resolved (no internet needed: only `localhost` and literal addresses are used)."""

from __future__ import annotations

import ipaddress

import pytest

from providers.endpoint_check import EndpointPolicy, EndpointRejected, check_custom_endpoint

REFUSED_BY_ADDRESS = [
    ("http://127.0.0.1:8000/v1", "loopback"),
    ("http://10.1.2.3/v1", "private"),
    ("http://172.16.0.9/v1", "private"),
    ("http://192.168.1.20:11434/v1", "private"),
    ("http://0.0.0.0:8080/v1", "unspecified"),
    ("http://[::1]:8000/v1", "loopback"),
    ("http://[fe80::1]/v1", "link-local"),
    ("http://[fc00::5]/v1", "private"),
    ("http://224.0.0.1/v1", "multicast"),
    ("http://240.0.0.1/v1", "reserved"),
    ("http://100.64.0.1/v1", "not a public address"),
    ("http://[::ffff:127.0.0.1]/v1", "loopback"),
    ("http://[2002:7f00:1::]/v1", "loopback"),  # 6to4 wrapping 127.0.0.1
    ("http://[64:ff9b::a00:1]/v1", "private"),  # NAT64 wrapping 10.0.0.1
    ("http://localhost:1234/v1", "loopback"),
    ("http://LOCALHOST./v1", "loopback"),
    ("http://2130706433/v1", "loopback"),  # decimal form of 127.0.0.1, resolved numerically
]

METADATA = [
    "http://169.254.169.254/latest/meta-data",
    "http://[fd00:ec2::254]/",
    "http://100.100.100.200/",
    "http://metadata.google.internal/computeMetadata/v1",
    "http://[::ffff:169.254.169.254]/",
]

# Container credential endpoints: ECS task role credentials, EKS Pod Identity (v4 and v6).
CREDENTIALS = [
    "http://169.254.170.23/v1",
    "http://[fd00:ec2::23]/v1",
    "http://169.254.170.2/v2/credentials",
    "http://[::ffff:169.254.170.23]/v1",
    "http://[64:ff9b::a9fe:aa17]/v1",  # NAT64 wrapping 169.254.170.23
]

MALFORMED = [
    ("", "malformed"),
    ("   ", "malformed"),
    ("not a url", "malformed"),
    ("api.example.com/v1", "scheme"),
    ("ftp://8.8.8.8/v1", "scheme"),
    ("file:///etc/passwd", "scheme"),
    ("javascript:alert(1)", "scheme"),
    ("http:///v1", "malformed"),
    ("http://8.8.8.8:99999/v1", "malformed"),
    ("http://user:secret@8.8.8.8/v1", "credentials"),
    ("http://8.8.8.8/v1\r\nHost: evil", "malformed"),
]


@pytest.mark.parametrize("url,label", REFUSED_BY_ADDRESS)
async def test_private_addresses_refused(url, label):
    with pytest.raises(EndpointRejected) as info:
        await check_custom_endpoint(url)
    assert info.value.reason == "private"
    assert label in str(info.value)
    assert "ALLOW_PRIVATE_ENDPOINTS" in str(info.value)


@pytest.mark.parametrize("url,label", REFUSED_BY_ADDRESS)
async def test_private_addresses_allowed_by_the_operator(url, label):
    checked = await check_custom_endpoint(url, allow_private=True)
    assert checked.addresses


@pytest.mark.parametrize("url", METADATA)
@pytest.mark.parametrize("allow_private", [False, True])
async def test_metadata_always_refused(url, allow_private):
    with pytest.raises(EndpointRejected) as info:
        await check_custom_endpoint(url, allow_private=allow_private)
    assert info.value.reason == "metadata"
    assert "metadata" in str(info.value)


@pytest.mark.parametrize("url", CREDENTIALS)
@pytest.mark.parametrize("allow_private", [False, True])
async def test_container_credential_addresses_always_refused(url, allow_private):
    with pytest.raises(EndpointRejected) as info:
        await check_custom_endpoint(url, allow_private=allow_private)
    assert info.value.reason == "metadata"
    assert "container credential address" in str(info.value)
    assert "ALLOW_PRIVATE_ENDPOINTS" not in str(info.value)  # no setting opens them


@pytest.mark.parametrize("url,address", [
    ("http://169.254.170.23/v1", "169.254.170.23"),
    ("http://[fd00:ec2::23]/v1", "fd00:ec2::23"),
    ("http://169.254.169.254/v1", "169.254.169.254"),
])
async def test_exact_allowance_never_admits_credential_or_metadata_addresses(url, address):
    policy = EndpointPolicy(allow_private=True, also_allowed=frozenset({ipaddress.ip_address(address)}))
    with pytest.raises(EndpointRejected) as info:
        await check_custom_endpoint(url, policy=policy)
    assert info.value.reason == "metadata"


async def test_exact_allowance_admits_only_that_address():
    policy = EndpointPolicy(also_allowed=frozenset({ipaddress.ip_address("127.0.0.2")}))
    checked = await check_custom_endpoint("http://127.0.0.2:8000/v1", policy=policy)
    assert checked.addresses == ("127.0.0.2",)
    with pytest.raises(EndpointRejected) as info:
        await check_custom_endpoint("http://127.0.0.1:8000/v1", policy=policy)
    assert info.value.reason == "private"


async def test_the_policy_resolver_answers_for_names():
    async def resolver(host, port):
        assert (host, port) == ("api.example.test", 443)
        return [ipaddress.ip_address("10.0.0.7")]

    with pytest.raises(EndpointRejected) as info:
        await check_custom_endpoint("https://api.example.test/v1", policy=EndpointPolicy(resolver=resolver))
    assert info.value.reason == "private"
    assert "https://api.example.test:443 cannot be used: 10.0.0.7 is a private address" in str(info.value)


@pytest.mark.parametrize("url,reason", MALFORMED)
async def test_malformed_urls_and_schemes_refused(url, reason):
    with pytest.raises(EndpointRejected) as info:
        await check_custom_endpoint(url, allow_private=True)
    assert info.value.reason == reason
    assert str(info.value)


async def test_credentials_never_echoed():
    with pytest.raises(EndpointRejected) as info:
        await check_custom_endpoint("https://me:sk-supersecret@8.8.8.8/v1")
    assert "sk-supersecret" not in str(info.value)


async def test_query_string_not_echoed():
    with pytest.raises(EndpointRejected) as info:
        await check_custom_endpoint("http://127.0.0.1/v1?key=sk-hidden-value")
    assert "sk-hidden-value" not in str(info.value)


@pytest.mark.parametrize("url,address", [
    ("https://8.8.8.8/v1", "8.8.8.8"),
    ("http://1.1.1.1:8080/openai/v1", "1.1.1.1"),
    ("https://[2606:4700:4700::1111]/v1", "2606:4700:4700::1111"),
])
async def test_public_addresses_accepted(url, address):
    checked = await check_custom_endpoint(url)
    assert checked.addresses == (address,)
    assert checked.base_url == url
