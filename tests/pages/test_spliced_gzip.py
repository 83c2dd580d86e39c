"""The pre-compressed page body with per-request holes decompresses to the plain page."""

import gzip
import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from public import spliced_gzip

texts = st.binary(max_size=3000) | st.text(max_size=3000).map(str.encode)


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(texts, min_size=1, max_size=4), data=st.data())
def test_a_spliced_body_is_the_gzip_of_the_parts_and_fillers(parts, data):
    fillers = data.draw(
        st.lists(st.binary(max_size=200), min_size=len(parts) - 1, max_size=len(parts) - 1)
    )
    body = spliced_gzip.fill(spliced_gzip.prepare(parts), fillers)
    plain = parts[0] + b"".join(f + p for f, p in zip(fillers, parts[1:], strict=True))
    assert gzip.decompress(body) == plain  # checks the trailer's CRC-32 and size too


def test_a_filler_longer_than_one_stored_block_and_a_page_sized_part():
    page = b"<tr><td>riga</td></tr>" * 8000
    token = bytes(range(256)) * 300  # 76,800 bytes: two stored blocks
    body = spliced_gzip.fill(spliced_gzip.prepare([page, page]), [token])
    assert gzip.decompress(body) == page + token + page
    assert len(body) < len(page) // 20 + len(token) + 100


def test_crc_combine_is_zlibs():
    a, b = b"scopa", b" e settebello"
    combined = spliced_gzip.crc_combine(zlib.crc32(a), zlib.crc32(b), spliced_gzip.shift_of(len(b)))
    assert combined == zlib.crc32(a + b)
