"""PyKMIP's client as the independent oracle of tests/cli/kmip.rs: one operation per request, printed on stdout.

    kmip_oracle.py HOST PORT CERT KEY CA OPERATION ARGS...
    kmip_oracle.py --serve

With --serve it reads one request per line on stdin, a JSON list of the arguments above, and answers each with one
JSON line: {"ok": true|false, "out": STDOUT, "err": WHY}. Every request is a new client and connection, as a run
is; only the interpreter and its imports (about a CPU second, most of a run) are kept between requests.

Operations: get UID (hex of the value), register-password NAME HEX (uid), register-aes NAME HEX (uid),
create-aes NAME (uid, activated), locate NAME (uids, one per line), destroy UID, activate UID, versions (the protocol versions
Discover Versions answers), revoke UID (Cessation of Operation; the key stays, deactivated),
decrypt-gcm UID IV TAG CIPHERTEXT AAD (all hex; AES-GCM Decrypt on the server in KMIP 1.4, whose Authenticated
Encryption fields PyKMIP's high-level client does not expose; prints the plaintext's hex), encrypt-gcm UID
PLAINTEXT AAD (hex; prints the hex of IV, TAG and CIPHERTEXT, space-separated).
"""
import os
import sys
import warnings

warnings.filterwarnings("ignore")

from kmip import enums  # noqa: E402
from kmip.pie import client as pie, objects  # noqa: E402
from kmip.core import attributes  # noqa: E402
from kmip.core.factories import attributes as attribute_factory  # noqa: E402
from kmip.core.messages import messages, payloads  # noqa: E402
from kmip.core.messages.contents import Operation  # noqa: E402


def gcm_parameters():
    return attributes.CryptographicParameters(
        block_cipher_mode=enums.BlockCipherMode.GCM,
        padding_method=enums.PaddingMethod.NONE,
        cryptographic_algorithm=enums.CryptographicAlgorithm.AES,
        tag_length=16)


def send(client, operation, payload):
    """One request in KMIP 1.4 (for the Authenticated Encryption fields), built as KMIPProxy.decrypt builds its."""
    client.kmip_version = enums.KMIPVersion.KMIP_1_4
    item = messages.RequestBatchItem(operation=Operation(operation), request_payload=payload)
    proxy = client.proxy
    response = proxy._send_and_receive_message(proxy._build_request_message(None, [item]))
    result = response.batch_items[0]
    if result.result_status.value != enums.ResultStatus.SUCCESS:
        sys.exit(f"{operation.name} failed: {result.result_reason} {result.result_message}")
    return result.response_payload


def decrypt_gcm(client, uid, iv, tag, ciphertext, aad):
    return send(client, enums.Operation.DECRYPT, payloads.DecryptRequestPayload(
        unique_identifier=uid, cryptographic_parameters=gcm_parameters(), data=ciphertext, iv_counter_nonce=iv,
        auth_additional_data=aad, auth_tag=tag)).data


def encrypt_gcm(client, uid, plaintext, aad):
    iv = os.urandom(12)
    answer = send(client, enums.Operation.ENCRYPT, payloads.EncryptRequestPayload(
        unique_identifier=uid, cryptographic_parameters=gcm_parameters(), data=plaintext, iv_counter_nonce=iv,
        auth_additional_data=aad))
    return answer.iv_counter_nonce or iv, answer.auth_tag, answer.data


def run(argv):
    host, port, cert, key, ca, operation, *args = argv
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
        elif operation == "activate":
            client.activate(args[0])
        elif operation == "revoke":
            client.revoke(enums.RevocationReasonCode.CESSATION_OF_OPERATION, args[0])
        elif operation == "decrypt-gcm":
            uid, *fields = args
            print(decrypt_gcm(client, uid, *[bytes.fromhex(f) for f in fields]).hex())
        elif operation == "encrypt-gcm":
            uid, *fields = args
            print(" ".join(part.hex() for part in encrypt_gcm(client, uid, *[bytes.fromhex(f) for f in fields])))
        elif operation == "versions":
            versions = client.proxy.discover_versions().protocol_versions
            print(" ".join(f"{v.major}.{v.minor}" for v in versions))
        else:
            sys.exit(f"unknown operation {operation}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../interop"))
        from served_oracle import serve  # noqa: E402
        serve(run)
    else:
        run(sys.argv[1:])
