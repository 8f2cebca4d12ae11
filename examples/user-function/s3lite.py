"""put_object and get_object of S3 with the standard library only (SigV4, path-style URLs), for
a runtime without boto3; the same calls and answers as boto3's for what app.py uses.

Endpoint: AWS_ENDPOINT_URL_S3, else https://s3.<AWS_REGION>.amazonaws.com; credentials:
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (a role's), as boto3 reads them.
Signing follows https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html."""
import datetime
import hashlib
import hmac
import io
import os
import urllib.parse
import urllib.request


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


class Client:
    def __init__(self):
        self.region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        self.endpoint = (os.environ.get("AWS_ENDPOINT_URL_S3")
                         or f"https://s3.{self.region}.amazonaws.com").rstrip("/")

    def _request(self, method: str, bucket: str, key: str, body: bytes = b"") -> bytes:
        url = urllib.parse.urlsplit(self.endpoint)
        path = "/" + bucket + "/" + urllib.parse.quote(key, safe="/-_.~")
        now = datetime.datetime.now(datetime.timezone.utc)
        amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        payload_hash = hashlib.sha256(body).hexdigest()
        headers = {"host": url.netloc, "x-amz-content-sha256": payload_hash, "x-amz-date": amz_date}
        token = os.environ.get("AWS_SESSION_TOKEN")
        if token:
            headers["x-amz-security-token"] = token
        names = sorted(headers)
        canonical = "\n".join([method, path, "", *(f"{n}:{headers[n]}" for n in names), "",
                               ";".join(names), payload_hash])
        scope = f"{day}/{self.region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                             hashlib.sha256(canonical.encode()).hexdigest()])
        k = _hmac(("AWS4" + os.environ["AWS_SECRET_ACCESS_KEY"]).encode(), day)
        for part in (self.region, "s3", "aws4_request"):
            k = _hmac(k, part)
        signature = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={os.environ['AWS_ACCESS_KEY_ID']}/"
                                    f"{scope}, SignedHeaders={';'.join(names)}, Signature={signature}")
        del headers["host"]
        req = urllib.request.Request(self.endpoint + path, data=body if method == "PUT" else None,
                                     method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.read()

    def put_object(self, Bucket: str, Key: str, Body: bytes) -> dict:
        self._request("PUT", Bucket, Key, Body)
        return {}

    def get_object(self, Bucket: str, Key: str) -> dict:
        return {"Body": io.BytesIO(self._request("GET", Bucket, Key))}
