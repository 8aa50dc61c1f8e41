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

TEXT |= {
    "uploads.files_title": (
        "**Your recordings** ({n}): remove one with its button below (you are asked first).",
        "**你的记录**（{n} 个）：用下方按钮删除（会先询问你）。",
        "**你的記錄**（{n} 個）：用下方按鈕刪除（會先詢問你）。",
    ),
    "uploads.files_none": (
        "Your data folder holds no recordings. Attach EDF, BDF, GDF, FIF, EEGLAB or BrainVision "
        "files to a message to upload them.",
        "你的数据文件夹中没有记录。在消息中附加 EDF、BDF、GDF、FIF、EEGLAB 或 BrainVision 文件即可上传。",
        "你的資料夾中沒有記錄。在訊息中附加 EDF、BDF、GDF、FIF、EEGLAB 或 BrainVision 檔案即可上傳。",
    ),
    "uploads.col_name": ("Recording", "记录", "記錄"),
    "uploads.col_size": ("Size", "大小", "大小"),
    "uploads.col_from": ("Where it came from", "来源", "來源"),
    "uploads.from_here": (
        "uploaded in this conversation, {when}",
        "在本对话中上传，{when}",
        "在本對話中上傳，{when}",
    ),
    "uploads.from_other": (
        "uploaded in another conversation, {when}",
        "在另一个对话中上传，{when}",
        "在另一個對話中上傳，{when}",
    ),
    "uploads.from_upload": ("uploaded", "已上传", "已上傳"),
    "uploads.from_demo": ("demo set", "演示数据集", "示範資料集"),
    "uploads.from_fetched": (
        "public data set (fetched)",
        "公开数据集（已下载）",
        "公開資料集（已下載）",
    ),
    "uploads.from_folder": (
        "placed in the data folder",
        "放在数据文件夹中",
        "放在資料夾中",
    ),
    "uploads.more_buttons": (
        "Buttons are shown for the first {n}; remove some to see buttons for the rest.",
        "只为前 {n} 个显示按钮；删除一些后可看到其余的按钮。",
        "只為前 {n} 個顯示按鈕；刪除一些後可看到其餘的按鈕。",
    ),
    "uploads.remove_button": ("Remove {name}", "删除 {name}", "刪除 {name}"),
    "uploads.done_button": ("Done", "完成", "完成"),
    "uploads.keep_button": ("Keep it", "保留", "保留"),
    "uploads.confirm": (
        "Remove `{name}` ({size}) from your data folder? This cannot be undone.",
        "要从你的数据文件夹中删除 `{name}`（{size}）吗？此操作无法撤销。",
        "要從你的資料夾中刪除 `{name}`（{size}）嗎？此操作無法復原。",
    ),
    "uploads.removed": ("🗑️ Removed {files}.", "🗑️ 已删除 {files}。", "🗑️ 已刪除 {files}。"),
    "uploads.not_removed": (
        "⚠️ `{name}` was not removed: {reason}",
        "⚠️ 未删除 `{name}`：{reason}",
        "⚠️ 未刪除 `{name}`：{reason}",
    ),
}
