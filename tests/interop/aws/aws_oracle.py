#!/usr/bin/env python3
"""AWS's own SDK (boto3) as the oracle of cryptadm's AWS tests, against a local moto server.

The server is AWS_ENDPOINT_URL; the region AWS_DEFAULT_REGION; credentials the usual variables (the admin user's,
made by `setup`). Blobs are raw CiphertextBlob bytes in standard base64, as the AWS CLI prints them.

    setup                          (on a fresh server, within its first unauthenticated requests) makes IAM users
                                   `admin` (everything) and `sealer` (kms:Encrypt and GenerateDataKey only), role
                                   `machine` (kms:Decrypt only, assumable with a web identity) and a KMS key with
                                   alias `alias/capi` and a second key; prints JSON with their keys and ARNs
    decrypt STORED OUT [KEY [CTX]] Decrypt; writes the plaintext bytes to OUT. STORED is a blob, or the record
                                   cryptadm's key stores keep ({"ciphertext": B64, "context": {...}}); the
                                   encryption context is CTX (a JSON object, `{}` for none) when given, else
                                   the record's
    encrypt KEY IN [CTX]           Encrypt the bytes of IN (with encryption context CTX); prints the blob's
                                   standard base64
    datakey KEY OUT                GenerateDataKey (32 bytes); writes the plaintext to OUT, prints
                                   kms://<base64 blob>@KEY
    put-object BUCKET KEY IN       creates the bucket if needed, puts the object
    put-secret NAME IN [binary]    creates a secret (SecretString, or SecretBinary)
    put-parameter NAME IN          puts a SecureString parameter
    secret-exists NAME             exits 0 when the secret can be read (GetSecretValue), else fails
    parameter-exists NAME          exits 0 when the parameter can be read (GetParameter), else fails
    assume ROLE                    AssumeRole of `node` (kms:*), `sealer-node` or `machine`; prints {"id", "secret",
                                   "token"}
    role NAME TRUST POLICY         creates (or updates) role NAME with the trust and inline policy documents in
                                   the files TRUST and POLICY; prints its ARN
    partition-admin REGION         makes (unauthenticated, through reset-auth) a user with every permission in the
                                   partition of REGION (moto keeps IAM per partition: the `aws` users are unknown
                                   in aws-cn); prints {"id", "secret"}
    create-key REGION              makes a KMS key in REGION (another partition's: cn-north-1, us-gov-west-1) with
                                   the credentials of the environment; prints its ARN
    anonymous N                    lets the next N requests through unauthenticated (moto's reset-auth): STS
                                   AssumeRoleWithWebIdentity is unsigned on AWS but moto wants a signature
    --serve                        reads one request per line on stdin, a JSON list of the arguments above, and
                                   answers each with one JSON line {"ok", "out", "err"}: one interpreter (and one
                                   boto3 import, about a CPU second) for a whole test binary, with the environment
                                   it was started with
"""

import base64
import json
import os
import sys
import urllib.request

import boto3

ENDPOINT = os.environ["AWS_ENDPOINT_URL"]


def client(service, **credentials):
    return boto3.client(service, endpoint_url=ENDPOINT, **credentials)


def policy(actions):
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]})


def setup():
    iam = client("iam", aws_access_key_id="setup", aws_secret_access_key="setup")
    out = {}
    for user, actions in [("admin", "*"), ("sealer", ["kms:Encrypt", "kms:GenerateDataKey"])]:
        iam.create_user(UserName=user)
        key = iam.create_access_key(UserName=user)["AccessKey"]
        iam.put_user_policy(UserName=user, PolicyName="p", PolicyDocument=policy(actions))
        out[user] = {"id": key["AccessKeyId"], "secret": key["SecretAccessKey"]}
    admin = {"aws_access_key_id": out["admin"]["id"], "aws_secret_access_key": out["admin"]["secret"]}
    iam = client("iam", **admin)
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Federated": "oidc"},
                                                     "Action": "sts:AssumeRoleWithWebIdentity"}]}
    role = iam.create_role(RoleName="machine", AssumeRolePolicyDocument=json.dumps(trust))["Role"]
    iam.put_role_policy(RoleName="machine", PolicyName="p", PolicyDocument=policy(["kms:Decrypt"]))
    out["machine_role"] = role["Arn"]
    # Roles whose temporary credentials the instance-metadata stand-in hands out.
    for name, actions in [("node", ["kms:*"]), ("sealer-node", ["kms:Encrypt", "kms:GenerateDataKey"])]:
        account = role["Arn"].split(":")[4]
        instance_trust = {"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{account}:user/admin"}, "Action": "sts:AssumeRole"}]}
        iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(instance_trust))
        iam.put_role_policy(RoleName=name, PolicyName="p", PolicyDocument=policy(actions))
    # `machine` is an instance profile's role too (the guest's first boot): assumable the stand-in's way as well.
    trust["Statement"] += instance_trust["Statement"]
    iam.update_assume_role_policy(RoleName="machine", PolicyDocument=json.dumps(trust))
    kms = client("kms", **admin)
    out["key"] = kms.create_key(Description="capi")["KeyMetadata"]["Arn"]
    kms.create_alias(AliasName="alias/capi", TargetKeyId=out["key"])
    out["other_key"] = kms.create_key(Description="other")["KeyMetadata"]["Arn"]
    print(json.dumps(out))


def main(argv):
    command, args = argv[0], argv[1:]
    if command == "setup":
        setup()
    elif command == "decrypt":
        extra = {"KeyId": args[2]} if len(args) > 2 else {}
        stored = args[0].strip()
        blob, context = stored, {}
        if stored.startswith("{"):
            record = json.loads(stored)
            blob, context = record["ciphertext"], record["context"]
        if len(args) > 3:
            context = json.loads(args[3])
        if context:
            extra["EncryptionContext"] = context
        plaintext = client("kms").decrypt(CiphertextBlob=base64.b64decode(blob), **extra)["Plaintext"]
        with open(args[1], "wb") as out:
            out.write(plaintext)
    elif command == "encrypt":
        with open(args[1], "rb") as data:
            extra = {"EncryptionContext": json.loads(args[2])} if len(args) > 2 else {}
            blob = client("kms").encrypt(KeyId=args[0], Plaintext=data.read(), **extra)["CiphertextBlob"]
        print(base64.b64encode(blob).decode())
    elif command == "datakey":
        answer = client("kms").generate_data_key(KeyId=args[0], KeySpec="AES_256")
        with open(args[1], "wb") as out:
            out.write(answer["Plaintext"])
        print(f"kms://{base64.b64encode(answer['CiphertextBlob']).decode()}@{args[0]}")
    elif command == "put-object":
        s3 = client("s3")
        region = os.environ["AWS_DEFAULT_REGION"]
        try:
            config = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
            s3.create_bucket(Bucket=args[0], **config)
        except s3.exceptions.BucketAlreadyOwnedByYou:
            pass
        with open(args[2], "rb") as data:
            s3.put_object(Bucket=args[0], Key=args[1], Body=data.read())
    elif command == "put-secret":
        with open(args[1], "rb") as data:
            value = data.read()
        kind = {"SecretBinary": value} if len(args) > 2 else {"SecretString": value.decode()}
        print(client("secretsmanager").create_secret(Name=args[0], **kind)["ARN"])
    elif command == "put-parameter":
        with open(args[1], "rb") as data:
            client("ssm").put_parameter(Name=args[0], Value=data.read().decode(), Type="SecureString", Overwrite=True)
    elif command == "secret-exists":
        client("secretsmanager").get_secret_value(SecretId=args[0])
    elif command == "parameter-exists":
        client("ssm").get_parameter(Name=args[0], WithDecryption=True)
    elif command == "assume":
        account = client("sts").get_caller_identity()["Account"]
        arn = f"arn:aws:iam::{account}:role/{args[0]}"
        keys = client("sts").assume_role(RoleArn=arn, RoleSessionName="instance", DurationSeconds=900)["Credentials"]
        print(json.dumps({"id": keys["AccessKeyId"], "secret": keys["SecretAccessKey"], "token": keys["SessionToken"]}))
    elif command == "role":
        iam = client("iam")
        with open(args[1]) as trust, open(args[2]) as policy_document:
            trust, policy_document = trust.read(), policy_document.read()
        try:
            arn = iam.create_role(RoleName=args[0], AssumeRolePolicyDocument=trust)["Role"]["Arn"]
        except iam.exceptions.EntityAlreadyExistsException:
            iam.update_assume_role_policy(RoleName=args[0], PolicyDocument=trust)
            arn = iam.get_role(RoleName=args[0])["Role"]["Arn"]
        iam.put_role_policy(RoleName=args[0], PolicyName=args[0], PolicyDocument=policy_document)
        print(arn)
    elif command == "partition-admin":
        main(["anonymous", "3"])
        iam = boto3.client("iam", endpoint_url=ENDPOINT, region_name=args[0], aws_access_key_id="setup",
                           aws_secret_access_key="setup")
        name = f"admin-{args[0]}"
        iam.create_user(UserName=name)
        key = iam.create_access_key(UserName=name)["AccessKey"]
        iam.put_user_policy(UserName=name, PolicyName="p", PolicyDocument=policy("*"))
        print(json.dumps({"id": key["AccessKeyId"], "secret": key["SecretAccessKey"]}))
    elif command == "create-key":
        print(boto3.client("kms", endpoint_url=ENDPOINT, region_name=args[0]).create_key()["KeyMetadata"]["Arn"])
    elif command == "anonymous":
        request = urllib.request.Request(ENDPOINT + "/moto-api/reset-auth", data=args[0].encode(),
                                         headers={"Content-Type": "text/plain"}, method="POST")
        urllib.request.urlopen(request, timeout=30).read()
    else:
        sys.stderr.write(f"aws_oracle.py: unknown command {command}\n")
        return 2
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        from served_oracle import serve  # noqa: E402
        serve(main)
    else:
        sys.exit(main(sys.argv[1:]))
