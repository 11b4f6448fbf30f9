"""Which files a walk reads: a symbolic link is never read through. One whose target lies inside
the root is left to its target's place; every other link (outside the root, into the uploads
area, to nothing) is told apart from the failures a reader may see."""

from __future__ import annotations

from pathlib import Path

from shirabe.indexing.walk import walk

OUTSIDE = "symbolic link to outside the document root: not followed"
UPLOADS = "symbolic link into the uploads folder: not followed"
BROKEN = "broken symbolic link: its target does not exist"
LOOP = "symbolic link loop: it points to a folder that holds it"


def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A document root with links of every kind, and the uploads folder beside it."""
    docs, uploads, outside = tmp_path / "docs", tmp_path / "uploads", tmp_path / "outside"
    for folder in (docs / "人事", docs / "public", uploads / "人事", outside / "etc"):
        folder.mkdir(parents=True)
    (docs / "人事" / "給与.md").write_text("給与", encoding="utf-8")
    (docs / "public" / "お知らせ.md").write_text("お知らせ", encoding="utf-8")
    (uploads / "人事" / "採用.md").write_text("採用", encoding="utf-8")
    (outside / "etc" / "hostname.txt").write_text("host", encoding="utf-8")
    public = docs / "public"
    (public / "upl_hr").symlink_to(uploads / "人事", target_is_directory=True)
    (public / "host.txt").symlink_to(outside / "etc" / "hostname.txt")
    (public / "etc").symlink_to(outside / "etc", target_is_directory=True)
    (public / "消えた.md").symlink_to(docs / "人事" / "ない.md")
    (public / "給与のリンク.md").symlink_to(docs / "人事" / "給与.md")
    (public / "人事").symlink_to(docs / "人事", target_is_directory=True)
    (public / "上").symlink_to(docs, target_is_directory=True)
    return docs, uploads


def walked(
    root: Path, inside: Path | None, skip: list[Path]
) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """The files read, the problems a reader may see, and the links not followed (relative)."""
    problems: dict[str, str] = {}
    links: dict[str, str] = {}
    found = walk(
        root,
        lambda p, r: problems.__setitem__(p.relative_to(root).as_posix(), r),
        skip,
        inside,
        links=lambda p, r: links.__setitem__(p.relative_to(root).as_posix(), r),
    )
    return [p.relative_to(root).as_posix() for p in found], problems, links


def test_only_links_into_the_root_are_left_to_their_target_and_the_rest_told_apart(
    tmp_path: Path,
) -> None:
    docs, uploads = tree(tmp_path)
    files, problems, links = walked(docs, docs, [uploads])
    assert files == ["public/お知らせ.md", "人事/給与.md"]
    assert problems == {}
    assert links == {
        "public/etc": OUTSIDE,
        "public/host.txt": OUTSIDE,
        "public/upl_hr": UPLOADS,
        "public/消えた.md": BROKEN,
        "public/上": LOOP,
    }


def test_an_uploads_folder_inside_the_root_is_no_target_either(tmp_path: Path) -> None:
    docs, _ = tree(tmp_path)
    uploads = docs / "アップロード"
    (uploads / "人事").mkdir(parents=True)
    (docs / "public" / "upl").symlink_to(uploads / "人事", target_is_directory=True)
    files, problems, links = walked(docs, docs, [uploads])
    assert "public/upl" not in files and problems == {}
    assert links["public/upl"] == UPLOADS


def test_without_a_root_the_folder_walked_is_the_root(tmp_path: Path) -> None:
    docs, uploads = tree(tmp_path)
    files, problems, links = walked(docs / "public", None, [uploads])
    assert files == ["お知らせ.md"]
    assert problems == {}
    # the sibling folder 人事 lies outside what is walked: no way there either
    assert links == {
        "etc": OUTSIDE,
        "host.txt": OUTSIDE,
        "upl_hr": UPLOADS,
        "消えた.md": BROKEN,
        "上": OUTSIDE,
        "人事": OUTSIDE,
        "給与のリンク.md": OUTSIDE,
    }


def test_a_sub_folder_walked_below_the_root_leaves_links_into_the_root_to_their_target(
    tmp_path: Path,
) -> None:
    docs, uploads = tree(tmp_path)
    files, problems, links = walked(docs / "public", docs, [uploads])
    assert files == ["お知らせ.md"]
    assert problems == {}
    assert set(links) == {"etc", "host.txt", "upl_hr", "消えた.md", "上"}
