"""PyKMIP's client as the independent oracle of tests/cli/kmip.rs: one operation per run, printed on stdout.

    kmip_oracle.py HOST PORT CERT KEY CA OPERATION ARGS...

Operations: get UID (hex of the value), register-password NAME HEX (uid), register-aes NAME HEX (uid),
create-aes NAME (uid, activated), locate NAME (uids, one per line), destroy UID, versions (the protocol versions
Discover Versions answers), revoke-destroy UID.
"""
import sys
import warnings

warnings.filterwarnings("ignore")

from kmip import enums  # noqa: E402
from kmip.pie import client as pie, objects  # noqa: E402
from kmip.core import attributes  # noqa: E402
from kmip.core.factories import attributes as attribute_factory  # noqa: E402


def main():
    host, port, cert, key, ca, operation, *args = sys.argv[1:]
    with pie.ProxyKmipClient(hostname=host, port=int(port), cert=cert, key=key, ca=ca,
                             ssl_version="PROTOCOL_TLSv1_2", config_file="/dev/null") as client:
        if operation == "get":
            print(client.get(args[0]).value.hex())
        elif operation == "register-password":
            secret = objects.SecretData(bytes.fromhex(args[1]), enums.SecretDataType.PASSWORD, name=args[0])
            print(client.register(secret))
        elif operation == "register-aes":
            key_object = objects.SymmetricKey(enums.CryptographicAlgorithm.AES, 256, bytes.fromhex(args[1]),
                                              masks=[enums.CryptographicUsageMask.ENCRYPT,
                                                     enums.CryptographicUsageMask.DECRYPT], name=args[0])
            uid = client.register(key_object)
            client.activate(uid)
            print(uid)
        elif operation == "create-aes":
            uid = client.create(enums.CryptographicAlgorithm.AES, 256, name=args[0],
                                cryptographic_usage_mask=[enums.CryptographicUsageMask.ENCRYPT,
                                                          enums.CryptographicUsageMask.DECRYPT])
            client.activate(uid)
            print(uid)
        elif operation == "locate":
            name = attribute_factory.AttributeFactory().create_attribute(enums.AttributeType.NAME, args[0])
            for uid in client.locate(attributes=[name]):
                print(uid)
        elif operation == "destroy":
            client.destroy(args[0])
        elif operation == "versions":
            versions = client.proxy.discover_versions().protocol_versions
            print(" ".join(f"{v.major}.{v.minor}" for v in versions))
        else:
            sys.exit(f"unknown operation {operation}")


if __name__ == "__main__":
    main()
