"""Uploads and the list of one's recordings (/files)."""

TEXT = {
    "uploads.cut_short": (
        "the file is shorter than its header says: it was cut off during copying or upload; "
        "upload the whole file",
        "文件比其文件头声明的要短：它在复制或上传时被截断了；请上传完整的文件",
        "檔案比其檔頭宣告的要短：它在複製或上傳時被截斷了；請上傳完整的檔案",
    ),
    "uploads.cut_short_seconds": (
        "its header says {stated} s, the file holds {held} s",
        "文件头声明 {stated} 秒，文件只有 {held} 秒",
        "檔頭宣告 {stated} 秒，檔案只有 {held} 秒",
    ),
}
